import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A fresh directory on the real disk (never tmpfs: durability tests need real
 * fsyncs). Remove it with the returned `cleanup`, typically in `afterEach`.
 */
export function makeTempDir(prefix = 'rookery-test-'): { dir: string; cleanup: () => void } {
  const base = process.env.ROOKERY_TEST_TMP ?? os.tmpdir();
  const dir = fs.mkdtempSync(path.join(base, prefix));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
