// What one tenant's index code may cost the indexer: memory, time, entries,
// and how many indexes (and sandboxes) a tenant may hold. Real indexer, real
// isolated-vm sandboxes, real SQLite files.
import path from 'node:path';
import type { IndexDefinition } from '@rookery/protocol';
import { RookeryError } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { IndexReader } from '../query/index-reader.js';
import { DatabaseIndexer, type DatabaseIndexerOptions } from './database-indexer.js';
import { INDEXES_DIRECTORY, indexFileName } from './index-file.js';
import { SandboxBudget } from './sandbox-budget.js';

let tmp: ReturnType<typeof makeTempDir>;
let db: Database;
const open: DatabaseIndexer[] = [];
const readers: IndexReader[] = [];

beforeEach(() => {
  tmp = makeTempDir();
  db = Database.create(tmp.dir, 'limits');
});
afterEach(async () => {
  for (const r of readers.splice(0)) r.close();
  for (const i of open.splice(0)) i.close();
  await db.close();
  tmp.cleanup();
});

function indexerOf(options: DatabaseIndexerOptions, directory = tmp.dir): DatabaseIndexer {
  const indexer = new DatabaseIndexer(directory, options);
  open.push(indexer);
  return indexer;
}

const doc = (collection: string, body: Record<string, unknown>) => ({
  ...body,
  '@metadata': { '@collection': collection },
});

async function put(docs: [id: string, collection: string, body: Record<string, unknown>][]): Promise<void> {
  await db.batch(docs.map(([Id, c, body]) => ({ Type: 'PUT' as const, Id, Document: doc(c, body) })));
}

function idsIn(name: string): string[] {
  const r = new IndexReader(path.join(tmp.dir, INDEXES_DIRECTORY, indexFileName(name)));
  readers.push(r);
  return r
    .run({ where: null, orderBy: [], skip: 0, take: 1000 })
    .entries.map((e) => e.docId ?? '')
    .sort();
}

function refusal(fn: () => unknown): RookeryError {
  try {
    fn();
  } catch (error) {
    if (error instanceof RookeryError) return error;
    throw error;
  }
  throw new Error('expected a RookeryError');
}

const BOMB = 'const a = []; while (true) a.push(new Array(1e6).fill(1));';

describe('a sandbox that dies in a batch', () => {
  it('indexes the innocent documents of the batch and names the guilty one', async () => {
    await put([
      ['m/1', 'M', { Name: 'one' }],
      ['m/2', 'M', { Name: 'bomb' }],
      ['m/3', 'M', { Name: 'three' }],
    ]);
    const indexer = indexerOf({ sandbox: { memoryMb: 32, documentTimeoutMs: 10_000 } });
    indexer.put({
      Name: 'M/Names',
      Maps: [`map('M', m => { if (m.Name === 'bomb') { ${BOMB} } return { Name: m.Name }; })`],
    });
    indexer.runUntilIdle();
    const stats = indexer.stats('M/Names')!;
    expect(stats.IsStale).toBe(false);
    expect(idsIn('M/Names')).toEqual(['m/1', 'm/3']);
    expect(stats.Errors.map((e) => e.Document)).toEqual(['m/2']);
    expect(stats.Errors[0]?.Error).toMatch(/32 MB memory limit/);
  });
});

describe('a map/reduce index with one bad document', () => {
  it('skips the document whose group key fails, names it, and moves on', async () => {
    await put([
      ['users/1', 'Users', { Team: 'red' }],
      ['users/2', 'Users', { Team: 'bad' }],
      ['users/3', 'Users', { Team: 'blue' }],
    ]);
    const indexer = indexerOf({});
    indexer.put({
      Name: 'Users/Teams',
      Maps: ["map('Users', u => ({ Team: u.Team, Count: 1 }))"],
      Reduce:
        'groupBy(x => { if (x.Team === "bad") throw new Error("no team"); return x.Team; })' +
        '.aggregate(g => ({ Team: g.key, Count: g.values.length }))',
    });
    indexer.runUntilIdle();
    const stats = indexer.stats('Users/Teams')!;
    expect(stats.LastIndexedEtag).toBe(db.lastEtag);
    expect(stats.IsStale).toBe(false);
    expect(stats.EntriesCount).toBe(2);
    expect(stats.Errors.map((e) => e.Document)).toEqual(['users/2']);
    expect(stats.Errors[0]?.Error).toMatch(/no team/);
  });

  it('skips a group whose aggregate fails, naming the group and its documents, and reduces the others', async () => {
    await put([
      ['users/1', 'Users', { Team: 'red' }],
      ['users/2', 'Users', { Team: 'bad' }],
      ['users/3', 'Users', { Team: 'blue' }],
    ]);
    const indexer = indexerOf({});
    indexer.put({
      Name: 'Users/Teams',
      Maps: ["map('Users', u => ({ Team: u.Team, Count: 1 }))"],
      Reduce:
        'groupBy(x => x.Team).aggregate(g => { if (g.key === "bad") throw new Error("cannot add"); ' +
        'return { Team: g.key, Count: g.values.length }; })',
    });
    indexer.runUntilIdle();
    const stats = indexer.stats('Users/Teams')!;
    expect(stats.LastIndexedEtag).toBe(db.lastEtag);
    expect(stats.EntriesCount).toBe(2);
    expect(stats.Errors).toHaveLength(1);
    expect(stats.Errors[0]?.Document).toBe('users/2');
    expect(stats.Errors[0]?.Error).toMatch(/group "bad".*cannot add/);

    // Fixing the document brings its group back.
    await put([['users/2', 'Users', { Team: 'red' }]]);
    indexer.runUntilIdle();
    expect(indexer.stats('Users/Teams')!.EntriesCount).toBe(2);
  });
});

describe('time one document may cost', () => {
  it('records a document over the per-document limit as its error; the batch around it is indexed', async () => {
    await put([
      ['s/1', 'S', { Spin: false }],
      ['s/2', 'S', { Spin: true }],
      ['s/3', 'S', { Spin: false }],
    ]);
    const indexer = indexerOf({ sandbox: { documentTimeoutMs: 50 } });
    indexer.put({
      Name: 'S/All',
      Maps: ["map('S', s => { if (s.Spin) { while (true) {} } return { Spin: s.Spin }; })"],
    });
    indexer.runUntilIdle();
    const stats = indexer.stats('S/All')!;
    expect(idsIn('S/All')).toEqual(['s/1', 's/3']);
    expect(stats.IsStale).toBe(false);
    expect(stats.Errors.map((e) => e.Document)).toEqual(['s/2']);
    expect(stats.Errors[0]?.Error).toMatch(/50 ms time limit per document/);
  });

  it('cuts a slow index’s batch at its time budget, so the other indexes are not held up', async () => {
    await put(
      Array.from(
        { length: 60 },
        (_, i) => [`s/${i}`, 'S', { N: i }] as [string, string, Record<string, unknown>],
      ),
    );
    // The control index's budget is ten times what its 60 trivial documents take on a loaded machine,
    // so only the slow index can be cut, however busy the machine is.
    const indexer = indexerOf({
      batchSize: 1_000,
      sandbox: { batchTimeMs: 1_000, documentTimeoutMs: 2_000 },
    });
    // Every document costs at least 50 ms, measured inside the sandbox: 60 of them cannot fit in 1 s.
    indexer.put({
      Name: 'S/Slow',
      Maps: [
        "map('S', s => { const end = Date.now() + 50; while (Date.now() < end) {} return { N: s.N }; })",
      ],
    });
    indexer.put({ Name: 'S/Control', Maps: ["map('S', s => ({ N: s.N }))"] });
    const progress = indexer.runOnce();
    const slow = progress.find((p) => p.index === 'S/Slow')!;
    const control = progress.find((p) => p.index === 'S/Control')!;
    expect(control.lastEtag).toBe(db.lastEtag);
    expect(slow.documents).toBeGreaterThan(0);
    expect(slow.lastEtag).toBeLessThan(db.lastEtag);
    expect(indexer.stats('S/Slow')!.ErrorsCount).toBe(0);
    // The slow index gets there in later turns, with nothing skipped.
    indexer.runUntilIdle();
    expect(idsIn('S/Slow')).toHaveLength(60);
    expect(indexer.stats('S/Slow')).toMatchObject({ IsStale: false, ErrorsCount: 0 });
  });
});

describe('time one map/reduce batch may spend reducing', () => {
  it('shrinks the batches of an index whose reduce is slow for every group; nothing is skipped', async () => {
    await put(
      Array.from(
        { length: 60 },
        (_, i) => [`s/${i}`, 'S', { N: i }] as [string, string, Record<string, unknown>],
      ),
    );
    const indexer = indexerOf({ batchSize: 1_000, sandbox: { batchTimeMs: 100 } });
    // One group per document, each at least 20 ms to reduce: 60 of them cannot fit in 100 ms.
    indexer.put({
      Name: 'S/SlowReduce',
      Maps: ["map('S', s => ({ K: s.N, C: 1 }))"],
      Reduce:
        'groupBy(x => x.K).aggregate(g => { const end = Date.now() + 20; while (Date.now() < end) {} ' +
        'return { K: g.key, C: g.values.length }; })',
    });
    const [first] = indexer.runOnce();
    expect(first?.lastEtag).toBeLessThan(db.lastEtag);
    expect(indexer.stats('S/SlowReduce')!.ErrorsCount).toBe(0);
    indexer.runUntilIdle();
    expect(indexer.stats('S/SlowReduce')).toMatchObject({ IsStale: false, EntriesCount: 60, ErrorsCount: 0 });
  });
});

describe('time one map/reduce batch may spend on group keys', () => {
  it('cuts the batch of an index whose group key is slow for every document; nothing is skipped', async () => {
    await put(
      Array.from(
        { length: 60 },
        (_, i) => [`s/${i}`, 'S', { N: i }] as [string, string, Record<string, unknown>],
      ),
    );
    const indexer = indexerOf({ batchSize: 1_000, sandbox: { batchTimeMs: 100 } });
    // At least 20 ms per document's group key: 60 of them cannot fit in 100 ms.
    indexer.put({
      Name: 'S/SlowKey',
      Maps: ["map('S', s => ({ K: s.N % 3, C: 1 }))"],
      Reduce:
        'groupBy(x => { const end = Date.now() + 20; while (Date.now() < end) {} return x.K; })' +
        '.aggregate(g => ({ K: g.key, C: g.values.reduce((n, v) => n + v.C, 0) }))',
    });
    const [first] = indexer.runOnce();
    expect(first?.lastEtag).toBeLessThan(db.lastEtag);
    expect(first?.documents).toBeGreaterThan(0);
    indexer.runUntilIdle();
    expect(indexer.stats('S/SlowKey')).toMatchObject({ IsStale: false, EntriesCount: 3, ErrorsCount: 0 });
  });
});

describe('entries per document', () => {
  it('refuses a document that emits more than the limit, naming it; the others are indexed', async () => {
    await put([
      ['f/1', 'F', { Fan: 3 }],
      ['f/2', 'F', { Fan: 200_000 }],
      ['f/3', 'F', { Fan: 2 }],
    ]);
    const indexer = indexerOf({ sandbox: { maxEntriesPerDocument: 100, documentTimeoutMs: 5_000 } });
    indexer.put({
      Name: 'F/Fan',
      Maps: [
        "map('F', f => { const out = []; for (let i = 0; i < f.Fan; i++) out.push({ I: i }); return out; })",
      ],
    });
    indexer.runUntilIdle();
    const stats = indexer.stats('F/Fan')!;
    expect(stats.EntriesCount).toBe(5);
    expect(stats.IsStale).toBe(false);
    expect(stats.Errors.map((e) => e.Document)).toEqual(['f/2']);
    expect(stats.Errors[0]?.Error).toMatch(/more than 100 entries/);
  });
});

describe('how many indexes and sandboxes a tenant holds', () => {
  const js = (name: string): IndexDefinition => ({ Name: name, Maps: ["map('U', u => ({ N: u.N }))"] });
  const declarative = (name: string): IndexDefinition => ({
    Name: name,
    Maps: [{ Collection: 'U', Fields: { N: 'N' } }],
  });

  it('refuses an index over the per-database count, naming the limit', () => {
    const indexer = indexerOf({ maxIndexes: 2 });
    indexer.put(declarative('A'));
    indexer.put(js('B'));
    const error = refusal(() => indexer.put(declarative('C')));
    expect(error.code).toBe('TooManyIndexes');
    expect(error.status).toBe(409);
    expect(error.message).toMatch(/at most 2 indexes/);
    // Redefining an existing index is not a new one.
    indexer.put({ ...js('B'), Maps: ["map('U', u => ({ M: u.N }))"] });
    indexer.delete('A');
    indexer.put(declarative('C'));
    expect(indexer.names.sort()).toEqual(['B', 'C']);
  });

  it('shares one sandbox memory budget between the databases of a tenant', async () => {
    const budget = new SandboxBudget(96);
    const sandbox = { memoryMb: 32 };
    const first = indexerOf({ sandbox, sandboxBudget: budget });
    const otherDb = Database.create(path.join(tmp.dir, 'other'), 'other');
    const second = indexerOf({ sandbox, sandboxBudget: budget }, path.join(tmp.dir, 'other'));
    try {
      first.put(js('A')); // 32 MB
      // A map/reduce JavaScript index has two sandboxes: its map and its reduce (64 MB).
      second.put({
        Name: 'R',
        Maps: ["map('U', u => ({ K: u.K, C: 1 }))"],
        Reduce: 'groupBy(x => x.K).aggregate(g => ({ K: g.key, C: g.values.length }))',
      });
      expect(budget.usedMb).toBe(96);
      // Declarative indexes run no sandbox and are not counted.
      second.put(declarative('D'));
      const error = refusal(() => first.put(js('B')));
      expect(error.code).toBe('IndexSandboxBudgetExceeded');
      expect(error.message).toMatch(/96 MB/);
      expect(first.names).toEqual(['A']);
      // Replacing an index gives its own reservation back first; deleting one frees room.
      first.put({ ...js('A'), Maps: ["map('U', u => ({ M: u.N }))"] });
      expect(budget.usedMb).toBe(96);
      second.delete('R');
      first.put(js('B'));
      expect(budget.usedMb).toBe(64);
      // Closing a database gives its reservations back.
      first.close();
      expect(budget.usedMb).toBe(0);
    } finally {
      await otherDb.close();
    }
  });
});
