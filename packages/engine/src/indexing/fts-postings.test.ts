import path from 'node:path';
import type { IndexDefinition } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import BetterSqlite3 from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { IndexReader } from '../query/index-reader.js';
import type { IndexQuery, Predicate } from '../query/plan.js';
import { DatabaseIndexer } from './database-indexer.js';
import { FTS_POSTINGS_META_KEY } from './fts-postings.js';
import { INDEXES_DIRECTORY, indexFileName } from './index-file.js';

// Two full-text fields, so column filters matter; words with diacritics and other scripts, so FTS5's own
// tokenizer (not the ASCII split) decides their tokens; entry numbers past 65,536 are covered by a test
// below (blocks), here the point is the same answers after any sequence of puts, updates and deletes.
const INDEX: IndexDefinition = {
  Name: 'Things/Search',
  Maps: [{ Collection: 'Things', Fields: { Title: 'Title', Body: 'Body', Rank: 'Rank' } }],
  Fields: { Title: { Indexing: 'Search' }, Body: { Indexing: 'Search' } },
};
const WORDS = ['json', 'http', 'grid', 'log', 'mvc', 'café', 'Über', 'naïve', 'Δelta', 'x9', 'a', 'JSON'];
const text = fc
  .array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(' ', '-', '.', ', ', '/')), { maxLength: 6 })
  .map((parts) => parts.map(([word, sep]) => word + sep).join(''));
const op = fc.oneof(
  fc.record({ kind: fc.constant('put' as const), id: fc.nat(30), title: text, body: text, rank: fc.nat(9) }),
  fc.record({ kind: fc.constant('delete' as const), id: fc.nat(30) }),
);
const query = fc.record({
  field: fc.constantFrom('Title', 'Body'),
  words: fc.array(fc.constantFrom(...WORDS, 'absent'), { minLength: 1, maxLength: 3 }),
  operator: fc.constantFrom('and' as const, 'or' as const),
  prefix: fc.boolean(),
  negate: fc.boolean(),
});

/** Every (column, token, entry) FTS5 holds, from its own vocabulary: what the postings must hold. */
function ftsTriples(file: string): string[] {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    db.exec('CREATE VIRTUAL TABLE temp.i USING fts5vocab(main, fts, instance)');
    return (
      db
        .prepare("SELECT DISTINCT substr(col, 2) || ' ' || term || ' ' || doc AS t FROM temp.i")
        .pluck()
        .all() as string[]
    ).sort();
  } finally {
    db.close();
  }
}

function postingTriples(file: string): string[] {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const out: string[] = [];
    const rows = db.prepare('SELECT col, term, block, count, data FROM fts_postings').all() as {
      col: number;
      term: string;
      block: number;
      count: number;
      data: Buffer;
    }[];
    for (const row of rows) {
      expect(row.count).toBeGreaterThan(0);
      const low: number[] = [];
      if (row.count > 4096) {
        for (let bit = 0; bit < 65_536; bit++) if ((row.data[bit >>> 3]! >>> (bit & 7)) & 1) low.push(bit);
      } else {
        for (let i = 0; i < row.count; i++) low.push(row.data.readUInt16LE(2 * i));
      }
      expect(low.length).toBe(row.count);
      for (const l of low) out.push(`${row.col} ${row.term} ${row.block * 65_536 + l}`);
    }
    return out.sort();
  } finally {
    db.close();
  }
}

describe('full-text postings (fts_postings)', () => {
  it('hold exactly what FTS5 holds, and searches answer the same through them as through FTS5, after any puts and deletes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(op, { minLength: 1, maxLength: 25 }), { minLength: 1, maxLength: 3 }),
        fc.array(query, { minLength: 1, maxLength: 12 }),
        async (rounds, queries) => {
          const tmp = makeTempDir();
          const db = Database.create(tmp.dir, 'things');
          const indexer = new DatabaseIndexer(tmp.dir, { batchSize: 7 });
          const file = path.join(tmp.dir, INDEXES_DIRECTORY, indexFileName(INDEX.Name));
          const readers: IndexReader[] = [];
          try {
            indexer.put(INDEX);
            for (const ops of rounds) {
              for (const o of ops) {
                const id = `things/${o.id}`;
                if (o.kind === 'put') {
                  await db.batch([
                    {
                      Type: 'PUT',
                      Id: id,
                      Document: {
                        Title: o.title,
                        Body: o.body,
                        Rank: o.rank,
                        '@metadata': { '@collection': 'Things' },
                      },
                    },
                  ]);
                } else if (db.get(id)) {
                  await db.batch([{ Type: 'DELETE', Id: id }]);
                }
              }
              indexer.runUntilIdle();
              expect(postingTriples(file)).toEqual(ftsTriples(file));
            }
            const through = new IndexReader(file, { matchSets: 'always' });
            const fts = new IndexReader(file, { matchSets: 'always', postings: false });
            const probes = new IndexReader(file, { matchSets: 'never' });
            readers.push(through, fts, probes);
            for (const q of queries) {
              const terms = q.words.map((w) => (q.prefix ? `${w.slice(0, 2)}*` : w)).join(' ');
              const leaf: Predicate = { kind: 'search', field: q.field, terms, operator: q.operator };
              const where: Predicate = q.negate ? { kind: 'not', child: leaf } : leaf;
              const iq: IndexQuery = {
                where,
                orderBy: [{ kind: 'field', field: 'Rank', descending: true }],
                skip: 0,
                take: 100,
              };
              const answer = (r: IndexReader) => {
                const page = r.run(iq);
                return { total: page.total, ids: page.entries.map((e) => e.docId).sort() };
              };
              const expected = answer(fts);
              expect(answer(through), JSON.stringify(q)).toEqual(expected);
              expect(answer(probes), JSON.stringify(q)).toEqual(expected);
            }
          } finally {
            for (const r of readers) r.close();
            indexer.close();
            await db.close();
            tmp.cleanup();
          }
        },
      ),
      { numRuns: 25, seed: 13 },
    );
  });

  it('are built from FTS5 when the indexer opens a file made before them, and read across 65,536-entry blocks', async () => {
    const tmp = makeTempDir();
    const db = Database.create(tmp.dir, 'things');
    const file = path.join(tmp.dir, INDEXES_DIRECTORY, indexFileName(INDEX.Name));
    try {
      const docs = Array.from({ length: 70_000 }, (_, i) => ({
        Type: 'PUT' as const,
        Id: `things/${i}`,
        Document: {
          Title: i % 3 === 0 ? 'json grid' : i % 1000 === 1 ? 'café rare' : 'http',
          Body: i % 2 === 0 ? 'log' : 'mvc',
          Rank: i % 10,
          '@metadata': { '@collection': 'Things' },
        },
      }));
      for (let i = 0; i < docs.length; i += 10_000) await db.batch(docs.slice(i, i + 10_000));
      let indexer = new DatabaseIndexer(tmp.dir, { batchSize: 10_000 });
      indexer.put(INDEX);
      indexer.runUntilIdle();
      indexer.close();
      const before = postingTriples(file);
      expect(before).toEqual(ftsTriples(file));
      // As a file from before the postings: the structure and its meta row gone.
      const raw = new BetterSqlite3(file);
      raw.exec(
        `DROP TABLE fts_postings; DROP TABLE fts_tokens; DELETE FROM meta WHERE key = '${FTS_POSTINGS_META_KEY}'`,
      );
      raw.close();
      const old = new IndexReader(file, { matchSets: 'always' });
      const oldAnswer = old.run({
        where: { kind: 'search', field: 'Title', terms: 'json', operator: 'or' },
        orderBy: [],
        skip: 0,
        take: 5,
      });
      old.close();
      indexer = new DatabaseIndexer(tmp.dir);
      indexer.close();
      expect(postingTriples(file)).toEqual(before);
      const reader = new IndexReader(file, { matchSets: 'always' });
      const page = reader.run({
        where: { kind: 'search', field: 'Title', terms: 'json', operator: 'or' },
        orderBy: [],
        skip: 0,
        take: 5,
      });
      expect(page.total).toBe(23_334);
      expect(page.total).toBe(oldAnswer.total);
      const rare = reader.run({
        where: { kind: 'search', field: 'Title', terms: 'CAFE rare', operator: 'and' },
        orderBy: [],
        skip: 0,
        take: 100,
      });
      // 'café' is folded to 'cafe' by FTS5 at indexing (postings take FTS5's tokens for text beyond ASCII).
      expect(rare.total).toBe(docs.filter((d) => d.Document.Title === 'café rare').length);
      expect(rare.total).toBe(47);
      reader.close();
    } finally {
      await db.close();
      tmp.cleanup();
    }
  });
});
