import path from 'node:path';
import { makeTempDir } from '@rookery/testkit';
import { describe, expect, it } from 'vitest';
import { openControlStore } from './open.js';
import { controlPaths } from './paths.js';
import { openSqliteControlStore } from './store/sqlite.js';

describe('the embedded layout', () => {
  it('puts everything under the data directory, resolved to an absolute path', () => {
    const paths = controlPaths('relative/data');
    const root = path.resolve('relative/data');
    for (const file of Object.values(paths)) expect(file.startsWith(root + path.sep)).toBe(true);
    expect(paths.controlDatabase).toBe(path.join(root, 'control', 'control.db'));
  });

  it('openControlStore opens the SQLite file of the layout when no PostgreSQL URL is given', async () => {
    const { dir, cleanup } = makeTempDir('rookery-open-');
    try {
      const store = await openControlStore({ dataDir: dir });
      expect(store.dialect).toBe('sqlite');
      await store.createTenant({ id: 'acme', name: 'Acme' });
      await store.close();
      const direct = await openSqliteControlStore(controlPaths(dir).controlDatabase);
      expect(await direct.getTenant('acme')).not.toBeNull();
      await direct.close();
    } finally {
      cleanup();
    }
  });
});
