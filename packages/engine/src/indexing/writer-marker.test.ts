import fs from 'node:fs';
import path from 'node:path';
import type { IndexDefinition } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { DatabaseIndexer } from './database-indexer.js';
import { INDEXES_DIRECTORY, indexFileName } from './index-file.js';
import { currentBootId, markerFileOf } from './writer-marker.js';

const definition: IndexDefinition = {
  Name: 'Users/ByCity',
  Maps: [{ Collection: 'Users', Fields: { City: 'City' } }],
};

let tmp: ReturnType<typeof makeTempDir>;
let db: Database;
let indexFile: string;

beforeEach(async () => {
  tmp = makeTempDir();
  db = Database.create(tmp.dir, 'people');
  await db.insertMany(
    Array.from({ length: 30 }, (_, i) => ({
      Id: `users/${i}`,
      Document: { City: i % 2 ? 'Oslo' : 'Lima', '@metadata': { '@collection': 'Users' } },
    })),
  );
  indexFile = path.join(tmp.dir, INDEXES_DIRECTORY, indexFileName(definition.Name));
});
afterEach(async () => {
  await db.close();
  tmp.cleanup();
});

function buildIndex(): DatabaseIndexer {
  const indexer = new DatabaseIndexer(tmp.dir);
  indexer.put(definition);
  indexer.runUntilIdle();
  return indexer;
}

const writeMarker = (bootId: string) =>
  fs.writeFileSync(markerFileOf(indexFile), JSON.stringify({ bootId, definition }));

describe.runIf(currentBootId() !== null)('writer marker (index files written without fsync)', () => {
  it('is held while the index is open and removed by a clean close', () => {
    const indexer = buildIndex();
    const marker = JSON.parse(fs.readFileSync(markerFileOf(indexFile), 'utf8'));
    expect(marker).toEqual({ bootId: currentBootId(), definition });
    indexer.close();
    expect(fs.existsSync(markerFileOf(indexFile))).toBe(false);
  });

  it('trusts the file after a process crash (a marker of this boot)', () => {
    buildIndex().close();
    writeMarker(currentBootId()!);
    const reopened = new DatabaseIndexer(tmp.dir);
    expect(reopened.stats(definition.Name)).toMatchObject({ EntriesCount: 30, IsStale: false });
    reopened.close();
  });

  it('rebuilds from the marker when the OS went down mid-write (a marker of another boot)', () => {
    buildIndex().close();
    // A torn file: whatever the OS had not written is gone.
    fs.writeFileSync(indexFile, Buffer.alloc(8192, 7));
    writeMarker('an-earlier-boot');
    const reopened = new DatabaseIndexer(tmp.dir);
    expect(reopened.stats(definition.Name)).toMatchObject({
      EntriesCount: 0,
      LastIndexedEtag: 0,
      IsStale: true,
    });
    reopened.runUntilIdle();
    expect(reopened.stats(definition.Name)).toMatchObject({ EntriesCount: 30, IsStale: false });
    reopened.close();
  });
});
