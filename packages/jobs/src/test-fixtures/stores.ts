// The stores the contract runs against, and how tests open a queue on one.
import pino from 'pino';
import { z } from 'zod';
import { openSqliteJobQueue } from '../sqlite/open.js';
import type { JobQueue, JobTypes } from '../types.js';

export const TestStoreSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('sqlite'), file: z.string() }),
]);
export type TestStore = z.infer<typeof TestStoreSchema>;

/** Failed attempts are expected by many tests: only errors reach the test output. */
export const testLogger = pino({ level: process.env.ROOKERY_TEST_LOG_LEVEL ?? 'error' }, pino.destination(2));

export function openTestQueue<Types extends JobTypes>(
  store: TestStore,
  types: Types,
): Promise<JobQueue<Types>> {
  return openSqliteJobQueue({ file: store.file, types, logger: testLogger });
}
