// A worker in a process of its own, for the tests that SIGKILL one mid-job or
// run several against one store. argv[2] is a WorkerProcessConfig as JSON.
// It says { ready: true } over IPC once working, and { started: id } when a
// hanging handler has begun a job.
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { openTestQueue, TestStoreSchema } from './stores.js';

export const WorkerProcessConfigSchema = z.object({
  store: TestStoreSchema,
  type: z.string(),
  /** hang: never finish (to be killed); log: append "start|end <job id> <pid>" lines to logFile. */
  behaviour: z.enum(['hang', 'log']),
  logFile: z.string().optional(),
  /** log: each job, once started, waits until this file exists (so that jobs run side by side on demand). */
  gateFile: z.string().optional(),
  concurrency: z.number().int().min(1),
});
export type WorkerProcessConfig = z.infer<typeof WorkerProcessConfigSchema>;

const config = WorkerProcessConfigSchema.parse(JSON.parse(process.argv[2] ?? '{}'));
const queue = await openTestQueue(config.store, { [config.type]: { payload: z.json() } });

queue.work(
  config.type,
  async (job) => {
    if (config.behaviour === 'hang') {
      process.send?.({ started: job.id });
      await new Promise(() => undefined);
    }
    const log = config.logFile!;
    fs.appendFileSync(log, `start ${job.id} ${process.pid}\n`);
    while (config.gateFile !== undefined && !fs.existsSync(config.gateFile)) await sleep(5);
    // Long enough for other processes to try to claim the same job meanwhile.
    await sleep(5);
    fs.appendFileSync(log, `end ${job.id} ${process.pid}\n`);
  },
  { concurrency: config.concurrency, pollMs: 20 },
);
process.send?.({ ready: true });
