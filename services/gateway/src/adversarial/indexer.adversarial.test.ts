// Attacks on the indexer through tenant index code, end to end through the real gateway over mutual
// TLS, a real host, real tenant and indexer processes and real isolated-vm sandboxes (README.md beside
// this file):
// - indexes beyond the per-database count, and JavaScript indexes beyond the tenant's sandbox memory
//   budget (isolates live outside the heap limit: without a budget, memory grows with every index);
// - a document that blows its sandbox's memory limit in a batch of innocent ones;
// - a document whose map/reduce group key throws;
// - a map that never returns for one document, and a map that is slow for every document (meant to
//   stall every other index of the tenant);
// - a map that emits 200,000 entries for one document.
// The limits are set small for this suite through the tenants' ROOKERY_INDEX_* environment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, type Reply, type Stack, startStack } from '../test-fixtures/stack.js';

const MAX_INDEXES = 3;
const SANDBOX_MB = 16;
const BUDGET_MB = 96;
// A second of CPU before a document is named for time: far more than any allocation loop needs to reach
// SANDBOX_MB, so on a starved machine the memory bomb is still named for memory, never for time.
const DOCUMENT_TIMEOUT_MS = 1_000;
const MAX_ENTRIES = 100;

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({
    tenantEnv: {
      ROOKERY_INDEX_MAX_PER_DATABASE: String(MAX_INDEXES),
      ROOKERY_INDEX_SANDBOX_MEMORY_MB: String(SANDBOX_MB),
      ROOKERY_INDEX_SANDBOX_BUDGET_MB: String(BUDGET_MB),
      ROOKERY_INDEX_DOCUMENT_TIMEOUT_MS: String(DOCUMENT_TIMEOUT_MS),
      ROOKERY_INDEX_BATCH_TIME_MS: '200',
      ROOKERY_INDEX_MAX_ENTRIES_PER_DOCUMENT: String(MAX_ENTRIES),
    },
  });
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

const doc = (collection: string, body: Record<string, unknown>) => ({
  ...body,
  '@metadata': { '@collection': collection },
});

/** Stores documents in one batch, so one indexing batch sees them together. */
async function store(
  admin: Client,
  db: string,
  docs: [id: string, collection: string, body: Record<string, unknown>][],
): Promise<void> {
  const reply = await admin.call('POST', `/databases/${db}/bulk_docs`, {
    Commands: docs.map(([Id, c, body]) => ({ Type: 'PUT', Id, Document: doc(c, body) })),
  });
  expect(reply.status).toBe(201);
}

async function defineIndex(admin: Client, db: string, definition: Record<string, unknown>): Promise<Reply> {
  return admin.call('PUT', `/databases/${db}/indexes`, definition);
}

/** Queries an index once it has caught up (the tenant waits for the indexer). */
async function queryIndex(admin: Client, db: string, index: string): Promise<Reply> {
  const rql = encodeURIComponent(`from index '${index}'`);
  const reply = await admin.call(
    'GET',
    `/databases/${db}/queries?waitForNonStaleResults=true&waitForNonStaleResultsTimeoutMs=60000&query=${rql}`,
  );
  expect(reply.status, reply.text).toBe(200);
  return reply;
}

async function statsOf(admin: Client, db: string, index: string): Promise<Record<string, unknown>> {
  const reply = await admin.call('GET', `/databases/${db}/indexes/stats?name=${encodeURIComponent(index)}`);
  expect(reply.status, reply.text).toBe(200);
  return reply.json;
}

const idsOf = (reply: Reply) =>
  (reply.json.Results as Record<string, unknown>[])
    .map((r) => (r['@metadata'] as Record<string, unknown>)['@id'] as string)
    .sort();

const errorsOf = (stats: Record<string, unknown>) =>
  stats.Errors as { Document: string | null; Error: string }[];

const jsMap = (name: string, collection: string) => ({
  Name: name,
  Maps: [`map('${collection}', x => ({ N: x.N }))`],
});

describe('how many indexes and sandboxes a tenant may hold', () => {
  let admin: Client;
  beforeAll(async () => {
    admin = await stack.tenantAdmin({ id: 'hoarder', name: 'Hoarder' }, 'hoarder-admin');
    for (const db of ['one', 'two'])
      expect((await admin.call('PUT', '/admin/databases', { Name: db })).status).toBe(201);
  }, 60_000);

  it('refuses an index over the per-database count with 409 naming the limit', async () => {
    for (let i = 0; i < MAX_INDEXES; i++) {
      expect((await defineIndex(admin, 'one', jsMap(`Js/${i}`, 'Items'))).status).toBe(201);
    }
    const refused = await defineIndex(admin, 'one', {
      Name: 'Declarative',
      Maps: [{ Collection: 'Items', Fields: { N: 'N' } }],
    });
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({ code: 'TooManyIndexes' });
    expect(refused.json.detail).toMatch(`at most ${MAX_INDEXES} indexes`);
  });

  it('refuses a JavaScript index over the tenant-wide sandbox budget, in another database too', async () => {
    // 'one' holds three JavaScript map indexes (3 × 16 MB); a map/reduce one holds two sandboxes.
    const mapReduce = {
      Name: 'Totals',
      Maps: ["map('Items', x => ({ K: x.K, C: 1 }))"],
      Reduce: 'groupBy(x => x.K).aggregate(g => ({ K: g.key, C: g.values.length }))',
    };
    expect((await defineIndex(admin, 'two', mapReduce)).status).toBe(201); // 80 MB
    expect((await defineIndex(admin, 'two', jsMap('Last', 'Items'))).status).toBe(201); // 96 MB
    const refused = await defineIndex(admin, 'two', jsMap('OneTooMany', 'Items'));
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({ code: 'IndexSandboxBudgetExceeded' });
    expect(refused.json.detail).toMatch(`${BUDGET_MB} MB sandbox budget`);
    // A declarative index runs no sandbox: still welcome.
    const declarative = { Name: 'Plain', Maps: [{ Collection: 'Items', Fields: { N: 'N' } }] };
    expect((await defineIndex(admin, 'two', declarative)).status).toBe(201);
    // Deleting a JavaScript index frees its share.
    expect((await admin.call('DELETE', '/databases/one/indexes?name=Js/0')).status).toBe(204);
    expect((await defineIndex(admin, 'one', jsMap('OneTooMany', 'Items'))).status).toBe(201);
  });
});

describe('hostile index code', () => {
  let admin: Client;
  beforeAll(async () => {
    admin = await stack.tenantAdmin({ id: 'hostile', name: 'Hostile' }, 'hostile-admin');
    for (const db of ['bomb', 'groups', 'spin', 'slow', 'fan'])
      expect((await admin.call('PUT', '/admin/databases', { Name: db })).status).toBe(201);
  }, 60_000);

  it('indexes the innocent documents of a batch with a memory bomb, naming the bomb', async () => {
    await store(admin, 'bomb', [
      ['m/1', 'M', { Name: 'one' }],
      ['m/2', 'M', { Name: 'bomb' }],
      ['m/3', 'M', { Name: 'three' }],
    ]);
    const bomb = 'const a = []; while (true) a.push(new Array(1e6).fill(1));';
    const put = await defineIndex(admin, 'bomb', {
      Name: 'M/Names',
      Maps: [`map('M', m => { if (m.Name === 'bomb') { ${bomb} } return { Name: m.Name }; })`],
    });
    expect(put.status).toBe(201);
    expect(idsOf(await queryIndex(admin, 'bomb', 'M/Names'))).toEqual(['m/1', 'm/3']);
    const stats = await statsOf(admin, 'bomb', 'M/Names');
    expect(errorsOf(stats).map((e) => e.Document)).toEqual(['m/2']);
    expect(errorsOf(stats)[0]?.Error).toMatch(`${SANDBOX_MB} MB memory limit`);
  });

  it('moves a map/reduce index past a document whose group key throws, naming it', async () => {
    await store(admin, 'groups', [
      ['users/1', 'Users', { Team: 'red' }],
      ['users/2', 'Users', { Team: 'bad' }],
      ['users/3', 'Users', { Team: 'blue' }],
    ]);
    const put = await defineIndex(admin, 'groups', {
      Name: 'Users/Teams',
      Maps: ["map('Users', u => ({ Team: u.Team, Count: 1 }))"],
      Reduce:
        'groupBy(x => { if (x.Team === "bad") throw new Error("no team"); return x.Team; })' +
        '.aggregate(g => ({ Team: g.key, Count: g.values.length }))',
    });
    expect(put.status).toBe(201);
    const reply = await queryIndex(admin, 'groups', 'Users/Teams');
    expect((reply.json.Results as { Team: string }[]).map((r) => r.Team).sort()).toEqual(['blue', 'red']);
    const stats = await statsOf(admin, 'groups', 'Users/Teams');
    expect(stats.LastIndexedEtag).toBeGreaterThan(0);
    expect(errorsOf(stats).map((e) => e.Document)).toEqual(['users/2']);
  });

  it('stops a document that never returns at the per-document limit; its neighbours are indexed', async () => {
    await store(admin, 'spin', [
      ['s/1', 'S', { Spin: false }],
      ['s/2', 'S', { Spin: true }],
      ['s/3', 'S', { Spin: false }],
    ]);
    const put = await defineIndex(admin, 'spin', {
      Name: 'S/All',
      Maps: ["map('S', s => { if (s.Spin) { while (true) {} } return { Spin: s.Spin }; })"],
    });
    expect(put.status).toBe(201);
    expect(idsOf(await queryIndex(admin, 'spin', 'S/All'))).toEqual(['s/1', 's/3']);
    const stats = await statsOf(admin, 'spin', 'S/All');
    expect(errorsOf(stats).map((e) => e.Document)).toEqual(['s/2']);
    expect(errorsOf(stats)[0]?.Error).toMatch(`${DOCUMENT_TIMEOUT_MS} ms time limit per document`);
  });

  it('does not let an index that is slow for every document hold up the others', async () => {
    const count = 200;
    await store(
      admin,
      'slow',
      Array.from(
        { length: count },
        (_, i) => [`s/${i}`, 'S', { N: i }] as [string, string, Record<string, unknown>],
      ),
    );
    // At least 20 ms per document, measured in the sandbox: 4 s of mapping in all, each document well
    // under its limit. It is defined first, so it has the first turn.
    const slow = await defineIndex(admin, 'slow', {
      Name: 'S/Slow',
      Maps: [
        "map('S', s => { const end = Date.now() + 20; while (Date.now() < end) {} return { N: s.N }; })",
      ],
    });
    expect(slow.status).toBe(201);
    const control = await defineIndex(admin, 'slow', {
      Name: 'S/Control',
      Maps: [{ Collection: 'S', Fields: { N: 'N' } }],
    });
    expect(control.status).toBe(201);
    // The control index catches up in its own turns while the slow one is still at work: each turn
    // gives every index one batch, and the slow one's batches are cut at their time budget.
    const caughtUp = await queryIndex(admin, 'slow', 'S/Control');
    expect(caughtUp.json.TotalResults).toBe(count);
    expect((await statsOf(admin, 'slow', 'S/Slow')).IsStale).toBe(true);
    // The slow index gets there too, skipping nothing.
    expect((await queryIndex(admin, 'slow', 'S/Slow')).json.TotalResults).toBe(count);
    expect(await statsOf(admin, 'slow', 'S/Slow')).toMatchObject({ IsStale: false, ErrorsCount: 0 });
  });

  it('refuses a document emitting more entries than the limit, naming it; the others are indexed', async () => {
    await store(admin, 'fan', [
      ['f/1', 'F', { Fan: 3 }],
      ['f/2', 'F', { Fan: 200_000 }],
      ['f/3', 'F', { Fan: 2 }],
    ]);
    const put = await defineIndex(admin, 'fan', {
      Name: 'F/Fan',
      Maps: [
        "map('F', f => { const out = []; for (let i = 0; i < f.Fan; i++) out.push({ I: i }); return out; })",
      ],
    });
    expect(put.status).toBe(201);
    await queryIndex(admin, 'fan', 'F/Fan');
    const stats = await statsOf(admin, 'fan', 'F/Fan');
    expect(stats).toMatchObject({ EntriesCount: 5, IsStale: false });
    expect(errorsOf(stats).map((e) => e.Document)).toEqual(['f/2']);
    expect(errorsOf(stats)[0]?.Error).toMatch(`more than ${MAX_ENTRIES} entries`);
  });
});
