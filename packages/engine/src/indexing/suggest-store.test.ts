import path from 'node:path';
import type { IndexDefinition } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import BetterSqlite3 from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { IndexReader } from '../query/index-reader.js';
import { MAX_SUGGEST_TERM_LENGTH } from '../query/suggestions.js';
import { DatabaseIndexer } from './database-indexer.js';
import { INDEXES_DIRECTORY, indexFileName } from './index-file.js';
import { candidatePrefixes, rankSuggestions } from './suggest.js';
import { SUGGEST_META_KEY } from './suggest-store.js';
import { deletionVariants } from './suggest-variants.js';

let tmp: ReturnType<typeof makeTempDir>;
let db: Database;

beforeEach(() => {
  tmp = makeTempDir();
  db = Database.create(tmp.dir, 'words');
});
afterEach(async () => {
  await db.close();
  tmp.cleanup();
});

/** A full-text field and a term field with suggestions, and a term field without (which scans, as before). */
const INDEX: IndexDefinition = {
  Name: 'Words/Suggest',
  Maps: [{ Collection: 'Words', Fields: { Text: 'Text', Tags: 'Tags', Plain: 'Plain' } }],
  Fields: { Text: { Indexing: 'Search', Suggestions: true }, Tags: { Suggestions: true } },
};

const fileOf = (definition: IndexDefinition) =>
  path.join(tmp.dir, INDEXES_DIRECTORY, indexFileName(definition.Name));

interface WordDoc {
  Text: string[];
  Tags: string[];
}

/**
 * The rule suggestions follow, on the documents themselves: every term of
 * the field (entries holding it = documents here, a map index) that starts
 * with a candidate prefix, ranked by rankSuggestions.
 */
function expected(docs: ReadonlyMap<number, WordDoc>, field: keyof WordDoc, term: string, max: number) {
  const counts = vocabularyOf(docs, field);
  const wanted = term.toLowerCase();
  const prefixes = candidatePrefixes(wanted);
  const candidates = [...counts]
    .filter(([word]) => prefixes.some((p) => word.startsWith(p)))
    .map(([word, n]) => ({ term: word, docs: n }));
  return rankSuggestions(wanted, candidates, { max }).map((s) => s.term);
}

function vocabularyOf(docs: ReadonlyMap<number, WordDoc>, field: keyof WordDoc): Map<string, number> {
  const counts = new Map<string, number>();
  for (const doc of docs.values())
    for (const word of new Set(
      field === 'Text' ? doc.Text.flatMap(tokens) : doc.Tags.map((w) => w.toLowerCase()),
    ))
      counts.set(word, (counts.get(word) ?? 0) + 1);
  return counts;
}

/** unicode61 with remove_diacritics 2 on the test's alphabet: lower-cased, accents dropped, split at the rest. */
function tokens(text: string): string[] {
  return text
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .split(/[^a-z0-9]+/)
    .filter((t) => t !== '');
}

/** The structure's vocabulary of a field, as stored. */
function storedVocabulary(file: string, field: string): Map<string, number> {
  const raw = new BetterSqlite3(file, { readonly: true });
  try {
    const rows = raw
      .prepare(
        `SELECT v.term AS term, v.docs AS docs FROM suggest_vocab v JOIN fields f ON f.id = v.field
         WHERE f.name = ?`,
      )
      .all(field) as { term: string; docs: number }[];
    return new Map(rows.map((r) => [r.term, r.docs]));
  } finally {
    raw.close();
  }
}

const put = (id: number, doc: WordDoc) => ({
  Type: 'PUT' as const,
  Id: `words/${id}`,
  Document: {
    Text: doc.Text.join(' '), // words may hold separators themselves
    Tags: doc.Tags,
    Plain: doc.Tags,
    '@metadata': { '@collection': 'Words' },
  },
});

const edit = fc.record({
  kind: fc.constantFrom('insert', 'delete', 'substitute', 'transpose'),
  at: fc.nat(),
  char: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'x'),
});

/** `source` with the edits applied in turn (positions taken modulo the length). */
function misspell(source: string, edits: readonly { kind: string; at: number; char: string }[]): string {
  let chars = Array.from(source);
  for (const e of edits) {
    const at = chars.length === 0 ? 0 : e.at % (chars.length + (e.kind === 'insert' ? 1 : 0));
    if (e.kind === 'insert') chars.splice(at, 0, e.char);
    else if (chars.length === 0) continue;
    else if (e.kind === 'delete') chars.splice(at, 1);
    else if (e.kind === 'substitute') chars[at] = e.char;
    else if (at + 1 < chars.length)
      chars = [...chars.slice(0, at), chars[at + 1]!, chars[at]!, ...chars.slice(at + 2)];
  }
  return chars.join('');
}

describe('the suggestion structure', () => {
  // Words over a small alphabet, so misspellings land near many terms; capitals check the lower-casing.
  const word = fc.stringMatching(/^[a-eA][a-e]{0,8}$/);
  // Full text also with accents (FTS5 drops them: é is e) and separators inside (a-b is two tokens): such
  // text is tokenized by FTS5 itself (the scratch table), plain ASCII in JavaScript.
  const text = fc.stringMatching(/^[a-eAÉ][a-eéü]{0,5}([-.,]?[a-eü]{1,3})?$/);
  const wordDoc = fc.record({
    Text: fc.array(fc.oneof(word, text), { minLength: 0, maxLength: 4 }),
    Tags: fc.array(word, { minLength: 0, maxLength: 3 }),
  });
  it('answers as the rule does over random vocabularies, misspellings, updates and deletes (property)', async () => {
    let run = 0;
    const live = new Set<number>(); // ids stored by earlier runs
    await fc.assert(
      fc.asyncProperty(
        fc.array(wordDoc, { minLength: 1, maxLength: 25 }),
        fc.array(fc.record({ id: fc.nat(30), doc: fc.option(wordDoc, { nil: null }) }), { maxLength: 15 }),
        fc.array(
          fc.record({
            pick: fc.nat(),
            edits: fc.array(edit, { maxLength: 3 }),
            max: fc.integer({ min: 1, max: 6 }),
          }),
          { minLength: 1, maxLength: 12 },
        ),
        async (initial, changes, queries) => {
          run += 1;
          const definition = { ...INDEX, Name: `Words/Suggest${run}` };
          const indexer = new DatabaseIndexer(tmp.dir, { batchSize: 7 });
          const reader = () => new IndexReader(fileOf(definition));
          const docs = new Map<number, WordDoc>();
          try {
            // The documents are a fresh set per run: those of earlier runs are deleted first.
            if (live.size > 0)
              await db.batch([...live].map((id) => ({ Type: 'DELETE' as const, Id: `words/${id}` })));
            live.clear();
            await db.batch(initial.map((doc, i) => put(i, doc)));
            for (const [i, doc] of initial.entries()) docs.set(i, doc);
            indexer.put(definition);
            indexer.runUntilIdle();
            // Then updates and deletes, indexed incrementally.
            for (const { id, doc } of changes) {
              if (doc) {
                await db.batch([put(id, doc)]);
                docs.set(id, doc);
              } else if (docs.has(id)) {
                await db.batch([{ Type: 'DELETE', Id: `words/${id}` }]);
                docs.delete(id);
              }
            }
            indexer.runUntilIdle();
            for (const id of docs.keys()) live.add(id);

            expect(storedVocabulary(fileOf(definition), 'Text')).toEqual(vocabularyOf(docs, 'Text'));
            expect(storedVocabulary(fileOf(definition), 'Tags')).toEqual(vocabularyOf(docs, 'Tags'));
            const r = reader();
            try {
              const words = [
                ...new Set([...docs.values()].flatMap((d) => [...d.Text.flatMap(tokens), ...d.Tags])),
              ];
              for (const q of queries) {
                const typo = misspell(words[q.pick % Math.max(1, words.length)] ?? 'abcde', q.edits);
                for (const field of ['Text', 'Tags'] as const)
                  expect(r.suggest(field, typo, q.max), `${field} ${typo}`).toEqual(
                    expected(docs, field, typo, q.max),
                  );
                // A field without suggestions scans as before, with the same rule.
                expect(r.suggest('Plain', typo, q.max)).toEqual(expected(docs, 'Tags', typo, q.max));
              }
            } finally {
              r.close();
            }
          } finally {
            indexer.close();
          }
        },
      ),
      { numRuns: 12 },
    );
  });

  it('is built when the indexer opens a file made before it, and answers the same', async () => {
    const docs = new Map<number, WordDoc>([
      [1, { Text: ['jquery', 'json', 'Logging'], Tags: ['jquery', 'ui'] }],
      [2, { Text: ['jquery', 'jqgrid'], Tags: ['grid'] }],
      [3, { Text: ['logger', 'london'], Tags: ['logging'] }],
    ]);
    await db.batch([...docs].map(([id, doc]) => put(id, doc)));
    let indexer = new DatabaseIndexer(tmp.dir);
    indexer.put(INDEX);
    indexer.runUntilIdle();
    indexer.close();
    // As a file written before the structure existed: no tables, no meta key.
    const raw = new BetterSqlite3(fileOf(INDEX));
    raw.exec(
      `DROP TABLE suggest_vocab; DROP TABLE suggest_variants; DROP TABLE suggest_tokens;
       DELETE FROM meta WHERE key = '${SUGGEST_META_KEY}';`,
    );
    raw.close();

    const typos = ['jquryt', 'jqeury', 'loggign', 'lndon', 'jsn', 'gird', 'qjuery'];
    const answers = (r: IndexReader) => typos.map((t) => [r.suggest('Text', t, 3), r.suggest('Tags', t, 3)]);
    const want = typos.map((t) => [expected(docs, 'Text', t, 3), expected(docs, 'Tags', t, 3)]);
    const before = new IndexReader(fileOf(INDEX));
    expect(answers(before)).toEqual(want); // read by scanning, as before
    indexer = new DatabaseIndexer(tmp.dir); // opening the index builds it
    try {
      expect(storedVocabulary(fileOf(INDEX), 'Text')).toEqual(vocabularyOf(docs, 'Text'));
      expect(answers(before)).toEqual(want); // the same reader, now on the structure
      await db.batch([{ Type: 'DELETE', Id: 'words/2' }]);
      docs.delete(2);
      indexer.runUntilIdle();
      expect(storedVocabulary(fileOf(INDEX), 'Text')).toEqual(vocabularyOf(docs, 'Text'));
      expect(before.suggest('Text', 'jqgrd', 3)).toEqual([]);
    } finally {
      before.close();
      indexer.close();
    }
  });
});

describe('full-text tokens', () => {
  it('are those FTS5 indexes, ASCII split in JavaScript or not (property)', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.string({ unit: 'binary-ascii', maxLength: 30 }),
            fc.string({ unit: 'grapheme', maxLength: 12 }),
          ),
          {
            minLength: 1,
            maxLength: 12,
          },
        ),
        async (texts) => {
          run += 1;
          const definition = { ...INDEX, Name: `Words/Tokens${run}` };
          await db.batch(
            texts.map((Text, i) => ({
              Type: 'PUT' as const,
              Id: `texts/${run}-${i}`,
              Document: { Text, Run: run, '@metadata': { '@collection': `Texts${run}` } },
            })),
          );
          const indexer = new DatabaseIndexer(tmp.dir);
          try {
            indexer.put({ ...definition, Maps: [{ Collection: `Texts${run}`, Fields: { Text: 'Text' } }] });
            indexer.runUntilIdle();
            const raw = new BetterSqlite3(fileOf(definition), { readonly: true });
            const fts = raw.prepare("SELECT term, doc FROM fts_vocab WHERE col = 'c0' AND doc > 0").all() as {
              term: string;
              doc: number;
            }[];
            raw.close();
            expect(storedVocabulary(fileOf(definition), 'Text')).toEqual(
              new Map(fts.map((r) => [r.term, r.doc])),
            );
          } finally {
            indexer.close();
          }
        },
      ),
      { numRuns: 15 },
    );
  });
});

describe('the term suggested for', () => {
  it('is refused above MAX_SUGGEST_TERM_LENGTH with InvalidQuery naming the limit, on either path', async () => {
    await db.batch([put(1, { Text: ['jquery'], Tags: ['jquery'] })]);
    const indexer = new DatabaseIndexer(tmp.dir);
    indexer.put(INDEX);
    indexer.runUntilIdle();
    const r = new IndexReader(fileOf(INDEX));
    try {
      for (const field of ['Text', 'Tags', 'Plain']) {
        expect(r.suggest(field, 'x'.repeat(MAX_SUGGEST_TERM_LENGTH), 5)).toEqual([]);
        expect(() => r.suggest(field, 'x'.repeat(MAX_SUGGEST_TERM_LENGTH + 1), 5)).toThrow(
          expect.objectContaining({ code: 'InvalidQuery', message: expect.stringMatching(/at most 1,024/) }),
        );
      }
    } finally {
      r.close();
      indexer.close();
    }
  });
});

describe('the suggestion structure of a map/reduce index', () => {
  it('follows the groups: a word leaves when no group result holds it any more', async () => {
    const definition: IndexDefinition = {
      Name: 'Words/ByTeam',
      Maps: [{ Collection: 'Words', Fields: { Team: 'Team', Words: 'Words' } }],
      Reduce: { GroupBy: ['Team'], Aggregate: { Words: { Distinct: 'Words' } } },
      Fields: { Words: { Indexing: 'Search', Suggestions: true } },
    };
    const player = (id: number, Team: string, Words: string[]) => ({
      Type: 'PUT' as const,
      Id: `words/${id}`,
      Document: { Team, Words, '@metadata': { '@collection': 'Words' } },
    });
    await db.batch([
      player(1, 'red', ['jquery', 'logging']),
      player(2, 'red', ['jquery']),
      player(3, 'blue', ['jquery', 'london']),
    ]);
    const indexer = new DatabaseIndexer(tmp.dir);
    const r = () => new IndexReader(fileOf(definition));
    try {
      indexer.put(definition);
      indexer.runUntilIdle();
      // Entries are groups: jquery is in both, the others in one.
      expect(storedVocabulary(fileOf(definition), 'Words')).toEqual(
        new Map([
          ['jquery', 2],
          ['logging', 1],
          ['london', 1],
        ]),
      );
      await db.batch([player(1, 'red', ['jquery']), { Type: 'DELETE', Id: 'words/3' }]);
      indexer.runUntilIdle();
      expect(storedVocabulary(fileOf(definition), 'Words')).toEqual(new Map([['jquery', 1]]));
      const reader = r();
      expect(reader.suggest('Words', 'lndon', 5)).toEqual([]);
      expect(reader.suggest('Words', 'jqeury', 5)).toEqual(['jquery']);
      reader.close();
    } finally {
      indexer.close();
    }
  });
});

describe('deletionVariants', () => {
  it('shares a variant between any two terms within two edits, however long (property)', () => {
    // The claim the structure rests on (suggest-variants.ts): checked on the whole terms' distance.
    const text = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'x', '😀'), maxLength: 14 });
    fc.assert(
      fc.property(text, fc.array(edit, { maxLength: 3 }), (a, edits) => {
        const b = misspell(a, edits);
        fc.pre(a !== '' && a !== b);
        if (rankSuggestions(a, [{ term: b, docs: 1 }], { maxDistance: 2 }).length === 0) return;
        const stored = new Set(deletionVariants(b, 2));
        for (const edits of [1, 2]) {
          if (rankSuggestions(a, [{ term: b, docs: 1 }], { maxDistance: edits }).length === 0) continue;
          expect(
            deletionVariants(a, edits).some((v) => stored.has(v)),
            `${a} / ${b}`,
          ).toBe(true);
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('deletes up to the given number of characters from the first seven', () => {
    expect(deletionVariants('abc', 1).sort()).toEqual(['ab', 'abc', 'ac', 'bc']);
    expect(deletionVariants('aab', 1).sort()).toEqual(['aa', 'aab', 'ab']);
    expect(deletionVariants('abcdefghij', 0)).toEqual(['abcdefg']);
    expect(deletionVariants('abcdefghij', 2)).toHaveLength(1 + 7 + 21);
    expect(deletionVariants('😀ab', 1).sort()).toEqual(['ab', '😀a', '😀ab', '😀b'].sort());
  });
});
