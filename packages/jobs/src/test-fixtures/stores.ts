// The two stores the contract runs against, and how tests open a queue on one:
// with the short intervals that keep the suite fast (leases and polls are
// configurable for exactly this reason).
import pino from 'pino';
import { z } from 'zod';
import { openPostgresJobQueue } from '../postgres/open.js';
import { openSqliteJobQueue } from '../sqlite/open.js';
import type { JobQueue, JobTypes } from '../types.js';

export const TestStoreSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('sqlite'), file: z.string() }),
  z.object({ kind: z.literal('postgres'), connectionString: z.string() }),
]);
export type TestStore = z.infer<typeof TestStoreSchema>;

/** Failed attempts are expected by many tests: only errors reach the test output. */
export const testLogger = pino({ level: process.env.ROOKERY_TEST_LOG_LEVEL ?? 'error' }, pino.destination(2));

export function openTestQueue<Types extends JobTypes>(
  store: TestStore,
  types: Types,
): Promise<JobQueue<Types>> {
  if (store.kind === 'sqlite') return openSqliteJobQueue({ file: store.file, types, logger: testLogger });
  return openPostgresJobQueue({
    connectionString: store.connectionString,
    types,
    logger: testLogger,
    maintenanceIntervalMs: 1000,
    busyTenantDelayMs: 50,
    maxConnections: 5,
  });
}
