import { beforeAll, describe, expect, it } from 'vitest';
import { TestSocket } from './test-fixtures/live-client.js';
import { sharedTenantServer } from './test-fixtures/tenant-server.js';

// Queries and indexes end to end: the real tenant server with its real indexer process.
const tenant = sharedTenantServer({ database: 'Shop' });
const { call } = tenant;

const query = (q: string, extra: Record<string, unknown> = {}) =>
  call('POST', '/databases/shop/queries', { Query: q, WaitForNonStaleResults: true, ...extra });

/**
 * Resolves once the index is gone. An automatic index that was extended retires in the background, once its
 * extension has caught up: a test that asks which index answers must wait for that, not race it. Watching
 * before listing means a removal between the two is not missed.
 */
async function retired(name: string): Promise<void> {
  const socket = await TestSocket.open(tenant.wsUrl('/databases/shop/changes'));
  try {
    await socket.command({ Command: 'watch-index', Param: name, CommandId: 1 });
    const listed = await call('GET', '/databases/shop/indexes');
    if (!(listed.json.Results as { Name: string }[]).some((r) => r.Name === name)) return;
    for (;;) {
      const change = await socket.next<{ Value: { Name: string; Type: string } }>();
      if (change.Value.Type === 'IndexRemoved') return;
    }
  } finally {
    await socket.close();
  }
}

beforeAll(async () => {
  const commands = [
    ...['Ada', 'Alan', 'Grace', 'Edsger', 'Barbara'].map((name, i) => ({
      Type: 'PUT',
      Id: `users/${i + 1}`,
      Document: {
        Name: name,
        Age: 30 + i * 10,
        Company: `companies/${(i % 2) + 1}`,
        Address: { City: i % 2 ? 'London' : 'Paris' },
        '@metadata': { '@collection': 'Users' },
      },
    })),
    {
      Type: 'PUT',
      Id: 'companies/1',
      Document: { Name: 'Acme', '@metadata': { '@collection': 'Companies' } },
    },
    {
      Type: 'PUT',
      Id: 'companies/2',
      Document: { Name: 'Initech', '@metadata': { '@collection': 'Companies' } },
    },
  ];
  expect((await call('POST', '/databases/shop/bulk_docs', { Commands: commands })).status).toBe(201);
});

describe('queries', () => {
  it('pages a collection without an index', async () => {
    const reply = await call('POST', '/databases/shop/queries', { Query: 'from Users limit 2 offset 1' });
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ TotalResults: 5, IndexName: null, IsStale: false });
    expect((reply.json.Results as { Name: string }[]).map((r) => r.Name)).toEqual(['Alan', 'Grace']);
  });

  it('creates an automatic index for a filtered query, then reuses or extends it', async () => {
    const first = await query("from Users where Address.City = 'london' order by Age desc");
    expect(first.status).toBe(200);
    expect(first.json.IndexName).toBe('Auto/Users/ByAddress.CityAndAge');
    expect((first.json.Results as { Name: string }[]).map((r) => r.Name)).toEqual(['Edsger', 'Alan']);
    expect(first.json.TotalResults).toBe(2);
    const again = await query('from Users where Age >= $min', { QueryParameters: { min: 60 } });
    expect(again.json.IndexName).toBe('Auto/Users/ByAddress.CityAndAge');
    expect(again.json.TotalResults).toBe(2);
    const extended = await query("from Users where startsWith(Name, 'a')");
    expect(extended.json.IndexName).toBe('Auto/Users/ByAddress.CityAndAgeAndName');
    expect((extended.json.Results as { Name: string }[]).map((r) => r.Name).sort()).toEqual(['Ada', 'Alan']);
  });

  it("keeps a collection query's etag when another automatic index takes the query over", async () => {
    // The test before extended the first automatic index; the extension retires the old one once it caught
    // up, in the background. Until it has, either may answer, and the retirer may delete the one that did
    // before this test does (its DELETE then finds nothing: 404). Once it has, the extension answers and
    // only this test deletes it; another automatic index then takes the query over.
    await retired('Auto/Users/ByAddress.CityAndAge');
    const url = `/databases/shop/queries?waitForNonStaleResults=true&query=${encodeURIComponent('from Users where Age > 30')}`;
    const first = await call('GET', url);
    expect(first.status).toBe(200);
    expect(first.json.IndexName).toBe('Auto/Users/ByAddress.CityAndAgeAndName');
    const removed = await call(
      'DELETE',
      '/databases/shop/indexes?name=Auto/Users/ByAddress.CityAndAgeAndName',
    );
    expect(removed.status).toBe(204);
    const again = await call('GET', url, undefined, { 'if-none-match': first.headers.get('etag')! });
    expect(again.status).toBe(304);
    const takenOver = await call('GET', url);
    expect(takenOver.json.IndexName).toBe('Auto/Users/ByAge');
  });

  it('answers If-None-Match with 304 until something changes', async () => {
    const first = await call(
      'GET',
      `/databases/shop/queries?waitForNonStaleResults=true&query=${encodeURIComponent('from Users where Age > 40')}`,
    );
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    const cached = await call(
      'GET',
      `/databases/shop/queries?waitForNonStaleResults=true&query=${encodeURIComponent('from Users where Age > 40')}`,
      undefined,
      {
        'if-none-match': etag,
      },
    );
    expect(cached.status).toBe(304);
    await call('PUT', '/databases/shop/docs?id=users/9', {
      Name: 'Linus',
      Age: 50,
      '@metadata': { '@collection': 'Users' },
    });
    const changed = await query('from Users where Age > 40', {});
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  it('answers a repeated query from recent results, until a write changes its answer', async () => {
    // Its own collection: the other tests count the users.
    const book = (id: string, Title: string, Year: number) =>
      call('PUT', `/databases/shop/docs?id=${id}`, { Title, Year, '@metadata': { '@collection': 'Books' } });
    await book('books/1', 'SICP', 1985);
    await book('books/2', 'TAOCP', 1968);
    const q = 'from Books where Year >= 1900 order by Year';
    const first = await query(q);
    const again = await query(q);
    // The same answer object, down to the duration of the run that made it.
    expect(again.json).toEqual(first.json);
    await book('books/3', 'Dragon Book', 1986);
    const changed = await query(q);
    expect(changed.json.ResultEtag).not.toBe(first.json.ResultEtag);
    expect((changed.json.Results as { Title: string }[]).map((r) => r.Title)).toEqual([
      'TAOCP',
      'SICP',
      'Dragon Book',
    ]);
    const timed = await query(`${q} include timings()`);
    const timedAgain = await query(`${q} include timings()`);
    expect(timedAgain.json.Timings).toBeDefined(); // asked how it ran: it runs again
    expect(timedAgain.json.Results).toEqual(timed.json.Results);
  });

  it('projects, loads and includes related documents, and reports timings and the plan', async () => {
    const reply = await query(
      "from Users as u where u.Name = 'Ada' load u.Company as c select u.Name as Name, c.Name as Employer include Company, timings()",
    );
    expect(reply.status).toBe(200);
    expect(reply.json.Results).toEqual([{ Name: 'Ada', Employer: 'Acme' }]);
    const plain = await query("from Users where Name = 'Ada' include Company, explanations()");
    expect(Object.keys(plain.json.Includes as object)).toEqual(['companies/1']);
    expect(plain.json.Plan).toMatchObject({ Operation: 'Query' });
    expect(reply.json.Timings).toHaveProperty('query');
  });

  it('runs static indexes with full-text search, facets and suggestions', async () => {
    const put = await call('PUT', '/databases/shop/indexes', {
      Name: 'Users/Search',
      Maps: [
        { Collection: 'Users', Fields: { Text: ['Name', 'Address.City'], City: 'Address.City', Age: 'Age' } },
      ],
      Fields: { Text: { Indexing: 'Search' } },
    });
    expect(put.status).toBe(201);
    const search = await query("from index 'Users/Search' where search(Text, 'london') and Age < 45");
    expect((search.json.Results as { Name: string }[]).map((r) => r.Name)).toEqual(['Alan']);
    const facets = await query("from index 'Users/Search' select facet(City), facet(Age < 45, Age >= 45)");
    expect(facets.json.Results).toEqual([
      // Five users plus Linus, who has no address (null is not a facet value).
      {
        Name: 'City',
        Values: [
          { Range: 'paris', Count: 3 },
          { Range: 'london', Count: 2 },
        ],
      },
      {
        Name: 'ranges',
        Values: [
          { Range: 'Age < 45', Count: 2 },
          { Range: 'Age >= 45', Count: 4 },
        ],
      },
    ]);
    const suggest = await query("from index 'Users/Search' select suggest(Text, 'lndon')");
    expect(suggest.json.Results).toEqual([{ Name: 'Text', Suggestions: ['london'] }]);
    const list = await call('GET', '/databases/shop/indexes');
    expect((list.json.Results as { Name: string }[]).map((r) => r.Name)).toContain('Users/Search');
    const stats = await call('GET', '/databases/shop/indexes/stats?name=users/search');
    expect(stats.json).toMatchObject({
      Name: 'Users/Search',
      IsStale: false,
      Progress: null,
      ErrorsCount: 0,
      Type: 'Map',
    });
  });

  it('resets and deletes indexes', async () => {
    await call('PUT', '/databases/shop/indexes', {
      Name: 'Users/ByAge',
      Maps: [{ Collection: 'Users', Fields: { Age: 'Age' } }],
    });
    const reset = await call('POST', '/databases/shop/indexes/reset?name=Users/ByAge');
    expect(reset.status).toBe(200);
    const after = await query("from index 'Users/ByAge' where Age = 30");
    expect(after.json.TotalResults).toBe(1);
    expect((await call('DELETE', '/databases/shop/indexes?name=Users/ByAge')).status).toBe(204);
    const gone = await query("from index 'Users/ByAge'");
    expect(gone.status).toBe(404);
    expect(gone.json.code).toBe('IndexNotFound');
  });

  it('explains bad queries and bad index definitions with a 4xx and a code', async () => {
    const cases: [string, Promise<Awaited<ReturnType<typeof call>>>, number, string, RegExp][] = [
      ['syntax', query('from Users where Name = '), 400, 'InvalidQuery', /line 1, column \d+/],
      ['missing parameter', query('from Users where Name = $who'), 400, 'InvalidQuery', /\$who/],
      ['unknown index', query("from index 'Nope'"), 404, 'IndexNotFound', /Nope/],
      [
        'range on full text',
        query("from index 'Users/Search' where Text > 'a'"),
        400,
        'InvalidQuery',
        /full-text/,
      ],
      [
        'search without a search field',
        query("from index 'Users/Search' where search(City, 'x')"),
        400,
        'InvalidQuery',
        /full-text field/,
      ],
      ['empty body', call('POST', '/databases/shop/queries', {}), 400, 'InvalidRequest', /Query/],
      [
        'bad definition',
        call('PUT', '/databases/shop/indexes', { Name: 'X', Maps: [] }),
        400,
        'InvalidRequest',
        /Maps/,
      ],
      [
        'reserved name',
        call('PUT', '/databases/shop/indexes', {
          Name: 'Auto/X',
          Maps: [{ Collection: 'Users', Fields: { A: 'A' } }],
        }),
        400,
        'InvalidIndexDefinition',
        /reserved/,
      ],
      [
        'javascript that does not compile',
        call('PUT', '/databases/shop/indexes', { Name: 'Js/Broken', Maps: ["map('Users', u => ({)"] }),
        400,
        'InvalidIndexDefinition',
        /compile/,
      ],
      [
        'unknown database',
        call('POST', '/databases/nope/queries', { Query: 'from Users' }),
        404,
        'DatabaseNotFound',
        /nope/,
      ],
    ];
    for (const [name, pending, status, code, detail] of cases) {
      const reply = await pending;
      expect({ name, status: reply.status, code: reply.json.code }).toEqual({ name, status, code });
      expect(reply.json.detail).toMatch(detail);
    }
  });

  it('indexes JavaScript definitions in the sandbox of the indexer process', async () => {
    const put = await call('PUT', '/databases/shop/indexes', {
      Name: 'Users/Decades',
      Maps: ["map('Users', u => ({ Decade: Math.floor(u.Age / 10) * 10, Count: 1 }))"],
      Reduce:
        'groupBy(x => x.Decade).aggregate(g => ({ Decade: g.key, Count: g.values.reduce((s, v) => s + v.Count, 0) }))',
    });
    expect(put.status).toBe(201);
    const reply = await query("from index 'Users/Decades' where Decade >= 50 order by Decade");
    expect(reply.json.Results).toEqual([
      { Decade: 50, Count: 2 },
      { Decade: 60, Count: 1 },
      { Decade: 70, Count: 1 },
    ]);
  });
});
