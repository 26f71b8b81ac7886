import { describe, expect, it } from 'vitest';
import { databaseOfQueuedJob } from './queued-job.js';

describe('databaseOfQueuedJob', () => {
  it("reads a queued backup's or sweep's database, lower-cased, ignoring fields it does not know", () => {
    expect(databaseOfQueuedJob({ database: 'Orders', kind: 'full' })).toBe('orders');
    expect(databaseOfQueuedJob({ database: 'events', now: '2026-01-01T00:00:00Z', addedLater: 1 })).toBe(
      'events',
    );
  });

  // Read through a cast before: a null payload threw a TypeError out of the scheduler's tick, and a
  // payload without a database named the database "undefined".
  it('a payload that names no database is no job for any database', () => {
    for (const payload of [null, undefined, 'orders', {}, { database: 42 }, { database: '' }])
      expect(databaseOfQueuedJob(payload)).toBeNull();
  });
});
