// CPU use during a run, split between this run's own processes (the runner and
// everything it started: host, tenants, indexers, gateway, k6) and everything
// else on the machine. On a shared machine a stall in the charts is either
// Rookery or someone else taking the cores; this tells them apart. Linux only
// (/proc); elsewhere it records nothing.
import fs from 'node:fs';

export interface CpuSample {
  /** Epoch ms at the end of the interval. */
  at: number;
  /** Cores used by this run's processes over the interval. */
  ours: number;
  /** Cores used by every other process. */
  others: number;
}

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on every Linux this runs on). */
const TICKS_PER_SECOND = 100;

/** Busy ticks of the whole machine (all cores): total minus idle and iowait. */
export function parseMachineTicks(procStat: string): number {
  const line = procStat.split('\n', 1)[0] ?? '';
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((sum, v) => sum + v, 0); // user … steal (guest is inside user)
  return total - (fields[3] ?? 0) - (fields[4] ?? 0);
}

/** ppid and utime + stime of one /proc/<pid>/stat line (the command name may hold spaces and parentheses). */
export function parseProcessStat(stat: string): { ppid: number; ticks: number } | null {
  const end = stat.lastIndexOf(')');
  if (end === -1) return null;
  const fields = stat.slice(end + 2).split(' ');
  // After the name: state(0) ppid(1) … utime(11) stime(12).
  const ppid = Number(fields[1]);
  const ticks = Number(fields[11]) + Number(fields[12]);
  return Number.isFinite(ppid) && Number.isFinite(ticks) ? { ppid, ticks } : null;
}

/** CPU ticks of `root` and all its descendants, by pid. */
function treeTicks(root: number): Map<number, number> {
  const parents = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const name of fs.readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const parsed = parseProcessStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
      if (!parsed) continue;
      parents.set(pid, parsed.ppid);
      ticks.set(pid, parsed.ticks);
    } catch {
      // exited while we looked
    }
  }
  const ours = new Map<number, number>();
  for (const [pid, t] of ticks) {
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = parents.get(p)) {
      if (p === root) {
        ours.set(pid, t);
        break;
      }
    }
  }
  return ours;
}

export class CpuSampler {
  readonly samples: CpuSample[] = [];
  private timer: NodeJS.Timeout | null = null;
  private last: { at: number; machine: number; ours: Map<number, number> } | null = null;

  constructor(private readonly root = process.pid) {}

  start(intervalMs: number): void {
    if (!fs.existsSync('/proc/stat')) return;
    this.last = this.read();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private read() {
    return {
      at: Date.now(),
      machine: parseMachineTicks(fs.readFileSync('/proc/stat', 'utf8')),
      ours: treeTicks(this.root),
    };
  }

  private sample(): void {
    const now = this.read();
    const last = this.last!;
    const seconds = (now.at - last.at) / 1000;
    let ours = 0;
    // A process born during the interval counts all its ticks; one that ended is lost (ours live all run).
    for (const [pid, ticks] of now.ours) ours += ticks - (last.ours.get(pid) ?? 0);
    const machine = now.machine - last.machine;
    if (seconds > 0) {
      const oursCores = ours / TICKS_PER_SECOND / seconds;
      const allCores = machine / TICKS_PER_SECOND / seconds;
      this.samples.push({ at: now.at, ours: oursCores, others: Math.max(0, allCores - oursCores) });
    }
    this.last = now;
  }
}

/** Average cores used by ours and others between two epoch-ms times. */
export function averageCpu(
  samples: readonly CpuSample[],
  from: number,
  to: number,
): { ours: number; others: number } {
  const within = samples.filter((s) => s.at > from && s.at <= to);
  if (within.length === 0) return { ours: 0, others: 0 };
  return {
    ours: within.reduce((sum, s) => sum + s.ours, 0) / within.length,
    others: within.reduce((sum, s) => sum + s.others, 0) / within.length,
  };
}
