import path from 'node:path';
import type { IndexDefinition } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { describe, expect, it } from 'vitest';
import { createIndexFile, openIndexFile } from './index-file.js';

const definition: IndexDefinition = {
  Name: 'Users/ByCity',
  Maps: [{ Collection: 'Users', Fields: { City: 'City', About: 'About' } }],
  Fields: { About: { Indexing: 'Search' } },
};

describe('createIndexFile', () => {
  it('makes a WAL file with 16 KiB pages, which it keeps when opened again', () => {
    const tmp = makeTempDir();
    try {
      const file = path.join(tmp.dir, 'indexes', 'users%2Fbycity.db');
      const created = createIndexFile(file, definition);
      // The page size only takes if it is set before the first table: a file that has tables proves it took.
      expect(created.pragma('page_size', { simple: true })).toBe(16_384);
      expect(created.pragma('journal_mode', { simple: true })).toBe('wal');
      created.close();
      const reader = openIndexFile(file, { readonly: true });
      expect(reader.pragma('page_size', { simple: true })).toBe(16_384);
      expect(reader.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE name = 'fts'").get()).toEqual({
        n: 1,
      });
      reader.close();
    } finally {
      tmp.cleanup();
    }
  });
});
