// Reads a database's statistics straight from its docs.db, read-only, without opening the database as
// its owner does (no merger, no schema migration, no write lock): the host reports stats of tenants it has
// not started, and of running ones without asking them, from the counters the engine keeps per transaction.
import fs from 'node:fs';
import path from 'node:path';
import type { DatabaseStats } from '@rookery/protocol';
import BetterSqlite3 from 'better-sqlite3';

const DOCS_FILE = 'docs.db';

/**
 * The same figures as `Database.stats()` for the database in `directory`, read
 * from a read-only connection to its docs.db (a WAL snapshot: a concurrent
 * writer is neither blocked nor seen half-way). Throws if there is no docs.db.
 */
export function readDatabaseStatsWithoutOpening(directory: string): DatabaseStats {
  const file = path.join(directory, DOCS_FILE);
  const sqlite = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    sqlite.pragma('busy_timeout = 5000');
    return sqlite
      .transaction(() => {
        const meta = new Map(
          (sqlite.prepare('SELECT key, value FROM meta').all() as { key: string; value: string }[]).map(
            (r) => [r.key, r.value] as const,
          ),
        );
        const counters = sqlite.prepare('SELECT key, value FROM counters').all() as {
          key: string;
          value: number;
        }[];
        const { etag } = sqlite
          .prepare(
            'SELECT max(coalesce((SELECT max(etag) FROM docs), 0), coalesce((SELECT max(etag) FROM tombstones), 0)) AS etag',
          )
          .get() as { etag: number };
        const collections: Record<string, number> = {};
        let documents = 0;
        let tombstones = 0;
        for (const { key, value } of counters) {
          if (key === 'tombstones') tombstones = value;
          if (!key.startsWith('docs/') || value === 0) continue;
          collections[key.slice(5)] = value;
          documents += value;
        }
        const bytes = sizeOnDisk(directory);
        return {
          DatabaseName: meta.get('name') ?? path.basename(directory),
          DatabaseId: meta.get('databaseId') ?? '',
          CountOfDocuments: documents,
          CountOfTombstones: tombstones,
          Collections: collections,
          LastDocEtag: etag,
          SizeOnDisk: { Bytes: bytes, Humane: humaneBytes(bytes) },
        };
      })
      .deferred();
  } finally {
    sqlite.close();
  }
}

function sizeOnDisk(directory: string): number {
  let total = 0;
  for (const suffix of ['', '-wal', '-shm']) {
    try {
      total += fs.statSync(path.join(directory, DOCS_FILE + suffix)).size;
    } catch {
      // -wal and -shm come and go with checkpoints.
    }
  }
  return total;
}

/** Bytes as RavenDB shows them in stats (`116.50 KBytes`); shared with the open database's stats. */
export function humaneBytes(bytes: number): string {
  const units = ['Bytes', 'KBytes', 'MBytes', 'GBytes', 'TBytes'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(2)} ${units[unit]}`;
}
