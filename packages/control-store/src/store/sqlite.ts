// The embedded control store: one SQLite file in WAL mode that the control
// plane, the gateway and the CLI open at the same time from their own
// processes. busy_timeout makes a writer wait its turn instead of failing, and
// no write lock is ever held across an await (see runBatch below), so waiting
// is always for another process, never for this one.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { ControlStore } from './control-store.js';
import type { FleetClock } from './fleet.js';
import { type BatchRunner, KyselyControlStore } from './kysely-store.js';
import { MIGRATIONS, migrateToLatest } from './migrations.js';
import type { ControlSchema } from './schema.js';

export interface SqliteControlStoreOptions {
  /** How long a writer waits for another process's write lock before failing (ms). Default 10 s. */
  busyTimeoutMs?: number;
  /** Tests only: the fleet's leases read this clock instead of the database's (fleet.ts says why). */
  fleetClock?: FleetClock;
}

/** Opens in progress in this process, per file: the migration of a file is awaited, not busy-waited. */
const migrating = new Map<string, Promise<void>>();

export async function openSqliteControlStore(
  file: string,
  options: SqliteControlStoreOptions = {},
): Promise<ControlStore> {
  // A first start creates the embedded layout (`<data>/control/`).
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new Database(file);
  try {
    // busy_timeout first: switching to WAL itself needs a lock another process may hold.
    sqlite.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 10_000))}`);
    sqlite.pragma('journal_mode = WAL');
    // FULL: a revocation or a new certificate survives power loss once acknowledged.
    sqlite.pragma('synchronous = FULL');
    sqlite.pragma('foreign_keys = ON');
  } catch (error) {
    sqlite.close();
    throw error;
  }
  const db = new Kysely<ControlSchema>({ dialect: new SqliteDialect({ database: sqlite }) });
  try {
    const key = path.resolve(fs.realpathSync(file));
    const previous = migrating.get(key) ?? Promise.resolve();
    const mine = previous.catch(() => undefined).then(() => migrate(sqlite, db));
    migrating.set(key, mine);
    try {
      await mine;
    } finally {
      if (migrating.get(key) === mine) migrating.delete(key);
    }
  } catch (error) {
    await db.destroy();
    throw error;
  }

  const runBatch: BatchRunner = async (queries) => {
    const run = sqlite.transaction(() =>
      queries.map((query) => sqlite.prepare(query.sql).run(...(query.parameters as unknown[])).changes),
    );
    // IMMEDIATE: take the write lock up front (waiting on busy_timeout), never upgrade a read lock.
    return run.immediate();
  };
  return new KyselyControlStore(db, { dialect: 'sqlite', runBatch, fleetClock: options.fleetClock });
}

function isCurrent(sqlite: Database.Database): boolean {
  const table = sqlite
    .prepare("select 1 from sqlite_master where type = 'table' and name = 'control_migrations'")
    .get();
  if (!table) return false;
  const applied = new Set(
    (sqlite.prepare('select name from control_migrations').all() as { name: string }[]).map((r) => r.name),
  );
  return Object.keys(MIGRATIONS).every((name) => applied.has(name));
}

async function migrate(sqlite: Database.Database, db: Kysely<ControlSchema>): Promise<void> {
  if (isCurrent(sqlite)) return;
  // Kysely's migrator takes no lock on SQLite; BEGIN IMMEDIATE holds the
  // file's write lock for the whole migration, so processes opening a new
  // file together take turns and the later ones find nothing to do.
  sqlite.exec('BEGIN IMMEDIATE');
  try {
    await migrateToLatest(db);
    sqlite.exec('COMMIT');
  } catch (error) {
    if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
    throw error;
  }
}
