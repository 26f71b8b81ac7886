// What the record classes behind the fleet's part of the store (fleet.ts, gateways.ts, usage.ts) are built
// on: the store's database and dialect, its batch runner, and "now" for a statement — the database's clock,
// or a test's (see fleet.ts's file comment for why time is the database's).
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { BatchRunner } from './kysely-store.js';
import type { ControlSchema } from './schema.js';
import { bigint } from './sql.js';

/** The test-only replacement for the database's clock (see fleet.ts's file comment). */
export type FleetClock = () => number;

export function databaseClock(dialect: 'sqlite' | 'postgres'): RawBuilder<number> {
  return dialect === 'postgres'
    ? sql<number>`cast(floor(extract(epoch from clock_timestamp()) * 1000) as bigint)`
    : // 'now' is the same for the whole statement in SQLite.
      sql<number>`cast(unixepoch('subsec') * 1000 as integer)`;
}

export abstract class ClockedRecords {
  constructor(
    protected readonly db: Kysely<ControlSchema>,
    protected readonly dialect: 'sqlite' | 'postgres',
    protected readonly runBatch: BatchRunner,
    private readonly clock?: FleetClock,
  ) {}

  /** "Now" for one statement: the database's clock, or the injected one as a parameter. */
  protected now(): RawBuilder<number> {
    return this.clock ? bigint(this.clock()) : databaseClock(this.dialect);
  }
}
