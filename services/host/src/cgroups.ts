// Per-tenant OS limits through cgroup v2: each tenant process (and the indexer it forks, which inherits
// its cgroup) goes into `<root>/rookery/<tenant>` with memory.max and cpu.max. Where cgroup v2 is absent
// or not writable (containers, cgroup v1, no privileges) the host says so once, at start, in one line (the
// reason, not a stack: it is a fact about the machine, not a fault) and runs without OS limits: a missing
// limit never stops a tenant from starting. The Node heap limit applies either way.
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
    if (this.limits.memoryBytes > 0 || this.limits.cpus > 0) this.probe();
  }

  /** True where limits can be applied, false where they were found unavailable, null when none are configured. */
  get enabled(): boolean | null {
    return this.available;
  }

  /** Puts `pid` into the tenant's cgroup with its limits. Returns false if limits are off or unavailable. */
  apply(tenantId: string, pid: number): boolean {
    if (this.available !== true) return false;
    try {
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
      return true;
    } catch (error) {
      this.log.warn(
        { tenant: tenantId },
        `could not apply cgroup limits to this tenant: ${reason(error)}; it runs with the Node heap limit only`,
      );
      return false;
    }
  }

  /** Sets the hierarchy up once; where it cannot be, says why in one line and turns limits off. */
  private probe(): void {
    try {
      this.prepareParent();
      this.available = true;
    } catch (error) {
      this.available = false;
      this.log.warn(
        `per-tenant OS limits (cgroup v2 memory.max / cpu.max) are unavailable here: ${reason(error)}; ` +
          'tenants run with the Node heap limit only',
      );
    }
  }

  /** Checks cgroup v2 is there and enables the memory and cpu controllers for our subtree. */
  private prepareParent(): void {
    let controllers: string[];
    try {
      controllers = fs.readFileSync(path.join(this.root, 'cgroup.controllers'), 'utf8').split(/\s+/);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      throw new Error(`${this.root} is not a cgroup v2 hierarchy (it has no cgroup.controllers)`);
    }
    const wanted = [
      ...(this.limits.memoryBytes > 0 ? ['memory'] : []),
      ...(this.limits.cpus > 0 ? ['cpu'] : []),
    ];
    const missing = wanted.filter((c) => !controllers.includes(c));
    if (missing.length > 0) throw new Error(`the cgroup controllers ${missing.join(', ')} are not enabled`);
    const enable = wanted.map((c) => `+${c}`).join(' ');
    write(this.root, 'cgroup.subtree_control', enable);
    fs.mkdirSync(this.parent, { recursive: true });
    write(this.parent, 'cgroup.subtree_control', enable);
  }
}

/** Why a cgroup operation failed, in words: permissions and read-only mounts are the usual reasons. */
function reason(error: unknown): string {
  const { code, path: file, message } = error as NodeJS.ErrnoException;
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS')
    return `${file ?? 'the cgroup'} is not writable (${code})`;
  return message;
}

function write(dir: string, file: string, value: string): void {
  fs.writeFileSync(path.join(dir, file), value);
}
