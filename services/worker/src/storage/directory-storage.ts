// Backups in a directory: the embedded default (`<data>/backups`), or any mounted volume. Each
// object is written to a temporary name beside its place, fsynced, renamed into place and the
// directory fsynced: after a crash an object is there whole or not at all.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type BackupStorage, keySegments, objectNotFound } from './backup-storage.js';

const TEMPORARY_MARK = '.partial-';

export class DirectoryStorage implements BackupStorage {
  readonly location: string;

  constructor(root: string) {
    this.location = path.resolve(root);
  }

  async write(key: string, body: AsyncIterable<Buffer>): Promise<number> {
    const file = this.pathOf(key);
    await fs.promises.mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}${TEMPORARY_MARK}${randomBytes(4).toString('hex')}`;
    const handle = await fs.promises.open(temporary, 'w');
    let bytes = 0;
    try {
      for await (const piece of body) {
        await handle.write(piece);
        bytes += piece.length;
      }
      await handle.sync();
    } catch (error) {
      await handle.close();
      await fs.promises.rm(temporary, { force: true });
      throw error;
    }
    await handle.close();
    await fs.promises.rename(temporary, file);
    await syncDirectory(path.dirname(file));
    return bytes;
  }

  async *read(key: string): AsyncIterable<Buffer> {
    const file = this.pathOf(key);
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(file, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw objectNotFound(key);
      throw error;
    }
    try {
      yield* handle.createReadStream({ highWaterMark: 1 << 20, autoClose: false });
    } finally {
      await handle.close();
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    const walk = async (directory: string, keyPrefix: string) => {
      let entries: fs.Dirent[];
      try {
        entries = await fs.promises.readdir(directory, { withFileTypes: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw error;
      }
      for (const entry of entries) {
        if (entry.isDirectory()) await walk(path.join(directory, entry.name), `${keyPrefix}${entry.name}/`);
        else if (entry.isFile()) keys.push(`${keyPrefix}${entry.name}`);
      }
    };
    await walk(this.pathOf(prefix), prefix);
    return keys.sort();
  }

  async removeAll(prefix: string): Promise<void> {
    await fs.promises.rm(this.pathOf(prefix), { recursive: true, force: true });
  }

  private pathOf(key: string): string {
    return path.join(this.location, ...keySegments(key));
  }
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await fs.promises.open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
