// Small file helpers for key material: create a file only if it does not exist yet, with
// its final mode from the first byte, and never half-written (write a temp file, then
// hard-link it into place, which fails instead of overwriting when another process won).
import { randomBytes } from 'node:crypto';
import { link, open, readFile, unlink } from 'node:fs/promises';

/** Writes `data` to `path` unless it exists. Returns true if this call created it. */
export async function createFileExclusive(
  path: string,
  data: string | Buffer,
  mode: number,
): Promise<boolean> {
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temp, 'wx', mode);
  try {
    await handle.writeFile(data);
    // The umask may have cleared bits we asked for; never leave it more open than `mode`.
    await handle.chmod(mode);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    if (isErrno(error, 'EEXIST')) return false;
    throw error;
  } finally {
    await unlink(temp).catch(() => {});
  }
}

/** Reads a file, or returns null if it does not exist. */
export async function readIfExists(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return null;
    throw error;
  }
}

export function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}
