// A timeline of the tenant's single writer, for bench:put-cpu --timeline (issue [13]): the tenant (src/main.ts)
// started through this file, which first wraps the engine's group commit to note, per transaction, when it
// began, when its COMMIT (SQLite's, with the WAL's fsync in it at the default durability) began and ended,
// when the transaction's answers were settled, how many writes it held, and the request thread's CPU time at
// its start and end. What lies between two transactions is the event loop's own work: reading and parsing
// requests, running their handlers, writing the previous group's answers — or waiting for requests.
// On exit the marks go to the file ROOKERY_BENCH_TIMELINE names (one JSON array); `summarizeTimeline` reads them.
import fs from 'node:fs';
import { TransactionMerger } from '../../../packages/engine/src/merger.js';
import { WriteTransaction } from '../../../packages/engine/src/write-transaction.js';

/** One group commit: times in ms (performance.now), CPU in µs of this thread. */
export interface GroupMarks {
  start: number;
  commitStart: number;
  commitEnd: number;
  end: number;
  units: number;
  cpuStart: number;
  cpuEnd: number;
}

const out = process.env.ROOKERY_BENCH_TIMELINE;
if (out) {
  const marks: GroupMarks[] = [];
  const cpu = () => {
    const { user, system } = process.threadCpuUsage();
    return user + system;
  };
  let current: GroupMarks | null = null;
  type Run = (this: unknown, work: Array<{ units: number }>) => void;
  const proto = TransactionMerger.prototype as unknown as { runTransaction: Run };
  const run = proto.runTransaction;
  proto.runTransaction = function (this: unknown, work) {
    const start = performance.now();
    const cpuStart = cpu();
    current = { start, commitStart: start, commitEnd: start, end: start, units: 0, cpuStart, cpuEnd: 0 };
    for (const item of work) current.units += item.units;
    try {
      run.call(this, work);
    } finally {
      current.end = performance.now();
      current.cpuEnd = cpu();
      marks.push(current);
      current = null;
    }
  };
  const commit = WriteTransaction.prototype.commit;
  WriteTransaction.prototype.commit = function (this: WriteTransaction) {
    if (current) current.commitStart = performance.now();
    try {
      commit.call(this);
    } finally {
      if (current) current.commitEnd = performance.now();
    }
  };
  process.on('exit', () => fs.writeFileSync(out, JSON.stringify(marks)));
}

await import('../src/main.js');
