// Which databases exist, as the schedulers see them: the mirror's directories
// (`<mirror>/<tenant>/<database>`), every mirrored database that was not deleted. The mirror is
// on the network disk every worker reads, so a worker learns of databases without asking a host.
import fs from 'node:fs';
import path from 'node:path';
import { hasMirror, isDeleted } from '@rookery/engine';
import { DatabaseNameSchema, TenantIdSchema } from '@rookery/protocol';

export interface MirroredDatabase {
  tenant: string;
  /** The mirror's directory name: the database's name in lower case. */
  database: string;
}

export function mirroredDatabases(mirrorDir: string): MirroredDatabase[] {
  const found: MirroredDatabase[] = [];
  for (const tenant of subdirectories(mirrorDir, (n) => TenantIdSchema.safeParse(n).success)) {
    const tenantDir = path.join(mirrorDir, tenant);
    for (const database of subdirectories(tenantDir, (n) => DatabaseNameSchema.safeParse(n).success)) {
      const directory = path.join(tenantDir, database);
      if (hasMirror(directory) && !isDeleted(directory)) found.push({ tenant, database });
    }
  }
  return found;
}

function subdirectories(directory: string, accept: (name: string) => boolean): string[] {
  try {
    return fs
      .readdirSync(directory, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && accept(entry.name))
      .map((entry) => entry.name)
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
