// What a tenant stores, read from its files without starting it: each database's counters through the
// engine's read-only stats reader, and the bytes of everything under the tenant's directory (documents,
// WAL, index files), counted as the tenant counts them itself (@rookery/engine's bytesUnder). The gateway's
// storage quota and operators' listings come from here.
import fs from 'node:fs';
import path from 'node:path';
import { bytesUnder, readDatabaseStatsWithoutOpening } from '@rookery/engine';
import type { HostTenantStats } from '@rookery/protocol';

/** The stats answer (protocol's HostTenantStats) but for who the tenant is and whether it runs. */
export type StoredTenantStats = Omit<HostTenantStats, 'tenantId' | 'state'>;

/** Reads the stats of every database in `<tenantDir>/databases/*`; one unreadable database does not hide the rest. */
export async function readTenantStats(tenantDir: string): Promise<StoredTenantStats> {
  const root = path.join(tenantDir, 'databases');
  let entries: fs.Dirent[] = [];
  try {
    entries = await fs.promises.readdir(root, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const databases: StoredTenantStats['databases'] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.isDirectory()) continue;
    const dir = path.join(root, entry.name);
    if (!fs.existsSync(path.join(dir, 'docs.db'))) continue;
    try {
      const stats = readDatabaseStatsWithoutOpening(dir);
      databases.push({
        name: stats.DatabaseName,
        databaseId: stats.DatabaseId,
        documents: stats.CountOfDocuments,
        tombstones: stats.CountOfTombstones,
        collections: stats.Collections,
        lastEtag: stats.LastDocEtag,
        bytesOnDisk: await bytesUnder(dir),
      });
    } catch (error) {
      databases.push({ name: entry.name, error: (error as Error).message });
    }
  }
  return { databases, bytesOnDisk: await bytesUnder(tenantDir) };
}
