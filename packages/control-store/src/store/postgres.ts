// The scale-out control store: PostgreSQL through node-postgres' pool. int8
// columns (times, byte counts) come back as JS numbers, as from SQLite; the
// parser is set on this pool only, never globally.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { ControlStore } from './control-store.js';
import type { FleetClock } from './fleet.js';
import { KyselyControlStore } from './kysely-store.js';
import { migrateToLatest } from './migrations.js';
import type { ControlSchema } from './schema.js';

export interface PostgresControlStoreOptions {
  /** Pool size. Default 10. */
  maxConnections?: number;
  /** An idle pooled connection failed (e.g. the server restarted); the pool replaces it. */
  onIdleError?: (error: Error) => void;
  /** Tests only: the fleet's leases read this clock instead of the database's (fleet.ts says why). */
  fleetClock?: FleetClock;
}

const INT8 = pg.types.builtins.INT8;

const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === INT8 && format !== 'binary') return (value: string) => Number(value);
    return format === 'binary' ? pg.types.getTypeParser(oid, 'binary') : pg.types.getTypeParser(oid, 'text');
  }) as typeof pg.types.getTypeParser,
};

export async function openPostgresControlStore(
  connectionString: string,
  options: PostgresControlStoreOptions = {},
): Promise<ControlStore> {
  const pool = new pg.Pool({ connectionString, max: options.maxConnections ?? 10, types });
  // Without a listener an idle client's error would crash the process.
  pool.on('error', (error) => options.onIdleError?.(error));
  // The pool listens only while a client is idle: a connection that drops while a client is checked out
  // (mid-query, or between a commit and its answer) would emit 'error' with no listener and crash the
  // process. The query in flight fails with the same error, and its caller handles that.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<ControlSchema>({ dialect: new PostgresDialect({ pool }) });
  try {
    try {
      await pool.query('select 1');
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(
        `Cannot reach the PostgreSQL control store at ${describe(connectionString)}: ${reason}`,
        {
          cause: error,
        },
      );
    }
    await migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return new KyselyControlStore(db, { dialect: 'postgres', fleetClock: options.fleetClock });
}

/** host:port/database of a connection string, never its password. */
function describe(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    return `${url.hostname}:${url.port || '5432'}${url.pathname}`;
  } catch {
    return 'the configured address';
  }
}
