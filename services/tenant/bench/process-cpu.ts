// CPU time of a server process and its descendants, read from /proc, per thread: what a benchmark divides by
// its request count to say how many µs of CPU a request costs. CPU time, unlike wall time, barely moves
// when the machine is shared (other processes take cores, not this process's work).
import fs from 'node:fs';

/** Clock ticks per second of /proc's utime and stime (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** Thread name → user plus system CPU in µs, for one process (and, prefixed, its descendants). */
export type CpuByThread = Map<string, number>;

function statFields(file: string): string[] | null {
  try {
    const stat = fs.readFileSync(file, 'utf8');
    return [
      stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      ...stat.slice(stat.lastIndexOf(')') + 2).split(' '),
    ];
  } catch {
    return null; // the thread (or process) ended between the listing and the read
  }
}

function childrenOf(pid: number): number[] {
  try {
    const text = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return text === '' ? [] : text.split(' ').map(Number);
  } catch {
    return [];
  }
}

/**
 * A snapshot of the CPU the process `pid` and its descendants have used, per thread name (threads of one
 * name, like V8's GC helpers, are summed). A descendant's threads are named `child:<name>`.
 */
export function cpuByThread(pid: number, prefix = ''): CpuByThread {
  const out: CpuByThread = new Map();
  let tasks: string[] = [];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    const fields = statFields(`/proc/${pid}/task/${tid}/stat`);
    if (!fields) continue;
    // After the name: state is [1], utime [12], stime [13] (stat fields 14 and 15).
    const name = `${prefix}${tid === String(pid) ? 'main' : fields[0]!}`;
    const us = ((Number(fields[12]) + Number(fields[13])) / TICKS_PER_SECOND) * 1e6;
    out.set(name, (out.get(name) ?? 0) + us);
  }
  for (const child of childrenOf(pid)) {
    for (const [name, us] of cpuByThread(child, `${prefix}child:`)) out.set(name, (out.get(name) ?? 0) + us);
  }
  return out;
}

/** µs of CPU per operation between two snapshots, per thread name and in `total`, rounded to 0.1 µs. */
export function cpuPerOperation(
  before: CpuByThread,
  after: CpuByThread,
  operations: number,
): Record<string, number> {
  const perOp: Record<string, number> = {};
  let total = 0;
  for (const [name, us] of after) {
    const spent = us - (before.get(name) ?? 0);
    total += spent;
    if (spent > 0) perOp[name] = Math.round((spent / operations) * 10) / 10;
  }
  return { total: Math.round((total / operations) * 10) / 10, ...perOp };
}
