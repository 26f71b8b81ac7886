// The embedded queue's one table. Versions are counted in SQLite's
// user_version; each entry below moves the file one version forward.
import type Database from 'better-sqlite3';

const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE jobs (
    -- Claim order among jobs due at the same time, and the newest-first order of list().
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued', 'active', 'completed', 'failed', 'cancelled')),
    -- Attempts started; with state = 'active' it is also the fencing token of the running attempt.
    attempts INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL,
    backoff_ms INTEGER NOT NULL,
    lease_ms INTEGER NOT NULL,
    dedupe_key TEXT,
    last_error TEXT,
    progress TEXT,
    lease_until INTEGER,
    created_at INTEGER NOT NULL,
    run_at INTEGER NOT NULL,
    started_at INTEGER,
    finished_at INTEGER
  );
  CREATE INDEX jobs_due ON jobs (type, state, run_at);
  CREATE INDEX jobs_by_tenant ON jobs (tenant_id, seq);
  CREATE INDEX jobs_by_lease ON jobs (lease_until) WHERE state = 'active';
  CREATE INDEX jobs_by_finish ON jobs (finished_at) WHERE finished_at IS NOT NULL;
  -- At most one job per (type, dedupe key) waits for its first attempt.
  CREATE UNIQUE INDEX jobs_waiting_dedupe ON jobs (type, dedupe_key)
    WHERE dedupe_key IS NOT NULL AND state = 'queued' AND attempts = 0;
  `,
];

/** Brings the file to the latest version; processes opening a new file together take turns. */
export function migrate(db: Database.Database): void {
  const version = () => db.pragma('user_version', { simple: true }) as number;
  if (version() >= MIGRATIONS.length) return;
  db.transaction(() => {
    for (let next = version(); next < MIGRATIONS.length; next++) db.exec(MIGRATIONS[next]!);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  }).immediate();
}
