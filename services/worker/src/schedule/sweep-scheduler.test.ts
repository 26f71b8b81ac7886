// The sweep scheduler on a real mirror and the real SQLite queue: one sweep per mirrored database
// per interval, read from the queue (which every worker shares), with the scheduled time as `now`.
import path from 'node:path';
import type { Database } from '@rookery/engine';
import { type JobQueue, jobQueueFile, openSqliteJobQueue } from '@rookery/jobs';
import { ROOKERY_JOB_TYPES, type RookeryJobTypes } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import pino from 'pino';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createMirroredDatabase, DATABASE, TENANT } from '../test-fixtures/mirrored-database.js';
import { SweepScheduler } from './sweep-scheduler.js';

const MINUTE = 60_000;
let tmp: ReturnType<typeof makeTempDir>;
let source: Database;
let queue: JobQueue<RookeryJobTypes>;

beforeEach(async () => {
  tmp = makeTempDir('rookery-sweep-scheduler-');
  source = createMirroredDatabase(path.join(tmp.dir, 'local'), path.join(tmp.dir, 'mirror'));
  await source.mirror!.flushed();
  queue = await openSqliteJobQueue({ file: jobQueueFile(tmp.dir), types: ROOKERY_JOB_TYPES });
});
afterEach(async () => {
  await queue.close();
  await source.close();
  tmp.cleanup();
});

it('enqueues one sweep per mirrored database per interval, for the time it was scheduled', async () => {
  let now = Date.now();
  const scheduler = new SweepScheduler({
    mirrorDir: path.join(tmp.dir, 'mirror'),
    queue,
    everyMs: 60 * MINUTE,
    log: pino({ level: 'silent' }),
    tickMs: 60 * MINUTE,
    now: () => now,
  });
  expect(await scheduler.tick()).toEqual([{ tenant: TENANT, database: DATABASE }]);
  // A second pass (this worker's or another's) finds the sweep on the queue.
  expect(await scheduler.tick()).toEqual([]);
  const [job] = await queue.list({ tenantId: TENANT, type: 'lifecycle-sweep' });
  expect(job).toMatchObject({
    payload: { database: DATABASE, now: new Date(now).toISOString() },
    dedupeKey: `lifecycle-sweep:${TENANT}/${DATABASE}`,
    maxAttempts: 3,
  });

  now += 30 * MINUTE;
  expect(await scheduler.tick()).toEqual([]);
  now += 31 * MINUTE;
  // Due again; the first has not run (no worker here): the dedupe key keeps one waiting.
  expect(await scheduler.tick()).toEqual([{ tenant: TENANT, database: DATABASE }]);
  expect(await queue.list({ tenantId: TENANT, type: 'lifecycle-sweep' })).toHaveLength(1);
});
