// What a directory takes on disk: the measure of a tenant's storage quota. The host reads it for a tenant
// it may not have started (the gateway's admission), the tenant for itself while a long write goes on
// (bulk insert, chunk by chunk), so the two count the same bytes: documents, WAL, index files.
import fs from 'node:fs';
import path from 'node:path';

/** Sum of the sizes of regular files under `dir`, at any depth (a missing directory is 0). */
export async function bytesUnder(dir: string): Promise<number> {
  let entries: fs.Dirent[];
  try {
    entries = await fs.promises.readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  let total = 0;
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await bytesUnder(full);
    else if (entry.isFile())
      // A file deleted between the listing and its stat (a checkpoint's WAL, an index dropped) counts 0.
      total += await fs.promises.stat(full).then(
        (s) => s.size,
        () => 0,
      );
  }
  return total;
}
