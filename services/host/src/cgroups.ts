// Per-tenant OS limits through cgroup v2: each tenant process (and the indexer it forks, which inherits
// its cgroup) goes into `<root>/rookery/<tenant>` with memory.max and cpu.max. Where cgroup v2 is absent
// or not writable (containers, cgroup v1, no privileges) the host says so once and runs without OS limits:
// a missing limit never stops a tenant from starting. The Node heap limit applies either way.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';

export interface CgroupLimits {
  /** memory.max in bytes; 0 = no limit. */
  memoryBytes: number;
  /** CPUs (cpu.max quota over a 100 ms period); 0 = no limit. */
  cpus: number;
}

const CPU_PERIOD_US = 100_000;

export class CgroupLimiter {
  private available: boolean | null = null;
  private readonly parent: string;

  constructor(
    private readonly root: string,
    private readonly limits: CgroupLimits,
    private readonly log: Logger,
  ) {
    this.parent = path.join(root, 'rookery');
  }

  /** True once limits have been applied at least once; false once they were found unavailable. */
  get enabled(): boolean | null {
    return this.available;
  }

  /** Puts `pid` into the tenant's cgroup with its limits. Returns false (and logs once) if it cannot. */
  apply(tenantId: string, pid: number): boolean {
    if (this.available === false) return false;
    if (this.limits.memoryBytes === 0 && this.limits.cpus === 0) return false;
    try {
      if (this.available === null) this.prepareParent();
      const group = path.join(this.parent, tenantId);
      fs.mkdirSync(group, { recursive: true });
      if (this.limits.memoryBytes > 0) write(group, 'memory.max', String(this.limits.memoryBytes));
      if (this.limits.cpus > 0) {
        write(
          group,
          'cpu.max',
          `${Math.max(1000, Math.round(this.limits.cpus * CPU_PERIOD_US))} ${CPU_PERIOD_US}`,
        );
      }
      write(group, 'cgroup.procs', String(pid));
      this.available = true;
      return true;
    } catch (error) {
      if (this.available === null) {
        this.available = false;
        this.log.warn(
          { err: error, cgroupRoot: this.root },
          'per-tenant OS limits (cgroup v2 memory.max / cpu.max) are unavailable here; tenants run with the Node heap limit only',
        );
      } else {
        this.log.warn({ err: error, tenant: tenantId }, 'could not apply cgroup limits to this tenant');
      }
      return false;
    }
  }

  /** Checks cgroup v2 is there and enables the memory and cpu controllers for our subtree. */
  private prepareParent(): void {
    const controllers = fs.readFileSync(path.join(this.root, 'cgroup.controllers'), 'utf8').split(/\s+/);
    const wanted = [
      ...(this.limits.memoryBytes > 0 ? ['memory'] : []),
      ...(this.limits.cpus > 0 ? ['cpu'] : []),
    ];
    const missing = wanted.filter((c) => !controllers.includes(c));
    if (missing.length > 0) throw new Error(`cgroup controllers not available: ${missing.join(', ')}`);
    const enable = wanted.map((c) => `+${c}`).join(' ');
    write(this.root, 'cgroup.subtree_control', enable);
    fs.mkdirSync(this.parent, { recursive: true });
    write(this.parent, 'cgroup.subtree_control', enable);
  }
}

function write(dir: string, file: string, value: string): void {
  fs.writeFileSync(path.join(dir, file), value);
}
