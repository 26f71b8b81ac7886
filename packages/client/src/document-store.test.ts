import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocumentStore } from './document-store.js';
import {
  CertificateRevokedError,
  ConcurrencyConflictError,
  DatabaseNotFoundError,
  IndexNotFoundError,
  InvalidQueryError,
  NonUniqueResultError,
  RateLimitedError,
  TooManyRequestsInSessionError,
  TwoFactorRequiredError,
} from './errors.js';
import { facet, range, rangeFacet } from './query/facets.js';
import { type StackWithStores, startStackWithStores } from './test-fixtures/stack-store.js';
import { totpCode } from './test-fixtures/totp.js';

// The HTTP side of the client against the real service over TLS: the gateway, a real tenant process,
// real certificates.
let env: StackWithStores;
let store: DocumentStore;

class User {
  id?: string;
  constructor(
    public Name: string,
    public Age: number,
    public Company?: string,
  ) {}
}

beforeAll(async () => {
  env = await startStackWithStores('acme');
  store = env.store();
}, 120_000);
afterAll(async () => {
  await env?.close();
});

describe('sessions', () => {
  it('stores with HiLo ids from the class name, saves one batch, and reads back the same object per id', async () => {
    const session = store.openSession();
    const ada = new User('Ada', 36);
    const alan = new User('Alan', 41);
    await session.store(ada);
    await session.store(alan);
    expect(ada.id).toMatch(/^users\/\d+-A$/);
    expect(alan.id).not.toBe(ada.id);
    expect(session.advanced.numberOfRequests).toBe(0); // ids came from a HiLo range, not per document
    const sentBefore = store.requestCounters.sent;
    await session.saveChanges();
    expect(store.requestCounters.sent - sentBefore).toBe(1); // both documents in one bulk_docs batch
    expect(session.advanced.getChangeVectorFor(ada)).toMatch(/.+/);
    expect(session.advanced.getMetadataFor(ada)).toMatchObject({ '@collection': 'Users', '@id': ada.id });
    await session.saveChanges(); // nothing changed: no request
    expect(store.requestCounters.sent - sentBefore).toBe(1);

    const other = store.openSession();
    const loaded = await other.load<User>(ada.id!, { documentType: User });
    expect(loaded).toBeInstanceOf(User);
    expect(loaded).toMatchObject({ id: ada.id, Name: 'Ada', Age: 36 });
    expect(await other.load(ada.id!.toUpperCase())).toBe(loaded); // ids are case-insensitive
    expect(other.advanced.numberOfRequests).toBe(1);
    expect(await other.load('users/does-not-exist')).toBeNull();
    expect(await other.load('users/does-not-exist')).toBeNull();
    expect(other.advanced.numberOfRequests).toBe(2);
  });

  it('tracks changes: only changed, new and deleted documents are sent, as one transaction', async () => {
    const setup = store.openSession();
    for (const [i, name] of ['Grace', 'Edsger', 'Barbara'].entries()) {
      await setup.store(
        { Name: name, Age: 50 + i, '@metadata': { '@collection': 'People' } },
        `people/${i + 1}`,
      );
    }
    await setup.saveChanges();

    const session = store.openSession();
    const people = await session.load<{ Name: string; Age: number }>(['people/1', 'people/2', 'people/3']);
    expect(session.advanced.numberOfRequests).toBe(1);
    people['people/1']!.Age += 1;
    session.delete('people/3');
    await session.store({ Name: 'Linus', Age: 30, '@metadata': { '@collection': 'People' } }, 'people/4');
    expect(session.advanced.hasChanged(people['people/2']!)).toBe(false);
    const before = session.advanced.getChangeVectorFor(people['people/2']!);
    await session.saveChanges();
    expect(session.advanced.numberOfRequests).toBe(2);
    expect(session.advanced.getChangeVectorFor(people['people/2']!)).toBe(before); // untouched: not sent

    const check = store.openSession();
    const after = await check.load<{ Age: number }>(['people/1', 'people/3', 'people/4']);
    expect(after['people/1']?.Age).toBe(51);
    expect(after['people/3']).toBeNull();
    expect(after['people/4']).toMatchObject({ Name: 'Linus' });
  });

  it('with optimistic concurrency, a concurrent change fails the save with ConcurrencyConflictError naming the document', async () => {
    const seed = store.openSession();
    await seed.store({ Balance: 10, '@metadata': { '@collection': 'Accounts' } }, 'accounts/1');
    await seed.store({ Balance: 0, '@metadata': { '@collection': 'Accounts' } }, 'accounts/2');
    await seed.saveChanges();

    const mine = store.openSession();
    mine.advanced.useOptimisticConcurrency = true;
    const [a1, a2] = Object.values(await mine.load<{ Balance: number }>(['accounts/1', 'accounts/2']));
    const theirs = store.openSession();
    const theirA1 = (await theirs.load<{ Balance: number }>('accounts/1'))!;
    theirA1.Balance = 100;
    await theirs.saveChanges();

    a1!.Balance -= 5;
    a2!.Balance += 5;
    const error = await mine.saveChanges().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConcurrencyConflictError);
    expect((error as ConcurrencyConflictError).documentId?.toLowerCase()).toBe('accounts/1');
    expect((error as ConcurrencyConflictError).status).toBe(409);
    // One transaction: the other account did not move either.
    const check = store.openSession();
    const after = await check.load<{ Balance: number }>(['accounts/1', 'accounts/2']);
    expect([after['accounts/1']?.Balance, after['accounts/2']?.Balance]).toEqual([100, 0]);

    // Storing a new entity over an existing id is a conflict too under optimistic concurrency.
    const blind = store.openSession({ useOptimisticConcurrency: true });
    await blind.store({ Balance: 1, '@metadata': { '@collection': 'Accounts' } }, 'accounts/2');
    await expect(blind.saveChanges()).rejects.toBeInstanceOf(ConcurrencyConflictError);
  });

  it('loads includes with the documents: a following load of an included id needs no request', async () => {
    const seed = store.openSession();
    await seed.store({ Name: 'Acme', '@metadata': { '@collection': 'Companies' } }, 'companies/1');
    await seed.store(new User('Hedy', 44, 'companies/1'), 'users/hedy');
    await seed.saveChanges();

    const session = store.openSession();
    const hedy = await session.load<User>('users/hedy', { includes: ['Company'] });
    expect(hedy?.Company).toBe('companies/1');
    const company = await session.load<{ Name: string }>('companies/1');
    expect(company?.Name).toBe('Acme');
    expect(session.advanced.numberOfRequests).toBe(1);
  });

  describe('includes of documents the session already has', () => {
    beforeAll(async () => {
      const seed = store.openSession();
      await seed.store({ Name: 'Initech', '@metadata': { '@collection': 'Companies' } }, 'companies/2');
      await seed.store({ Name: 'Umbrella', '@metadata': { '@collection': 'Companies' } }, 'companies/3');
      await seed.store(new User('Joan', 52, 'companies/2'), 'users/joan');
      await seed.store(new User('Kathleen', 47, 'companies/3'), 'users/kathleen');
      await seed.store(new User('Radia', 70, 'companies/gone'), 'users/radia');
      await seed.saveChanges();
    });

    it('fetches the includes of a document loaded before without them, keeping its object', async () => {
      const session = store.openSession();
      const joan = await session.load<User>('users/joan');
      joan!.Age = 53; // a local change the second load must not overwrite
      expect(await session.load<User>('users/joan', { includes: ['Company'] })).toBe(joan);
      expect(session.advanced.numberOfRequests).toBe(2);
      expect(await session.load('companies/2')).toMatchObject({ Name: 'Initech' });
      expect(session.advanced.numberOfRequests).toBe(2);
      expect(joan!.Age).toBe(53);
      expect(session.advanced.hasChanged(joan!)).toBe(true);
    });

    it('fetches, in one request, the ids it lacks and the includes of those it has', async () => {
      const session = store.openSession();
      const joan = await session.load<User>('users/joan');
      const users = await session.load<User>(['users/joan', 'users/kathleen', 'users/radia'], {
        includes: ['Company'],
        documentType: User,
      });
      expect(session.advanced.numberOfRequests).toBe(2);
      expect(users['users/joan']).toBe(joan);
      expect(users['users/kathleen']).toBeInstanceOf(User);
      const companies = await session.load<{ Name: string }>([
        'companies/2',
        'companies/3',
        'companies/gone',
      ]);
      expect(session.advanced.numberOfRequests).toBe(2);
      expect(companies['companies/2']?.Name).toBe('Initech');
      expect(companies['companies/3']?.Name).toBe('Umbrella');
      expect(companies['companies/gone']).toBeNull(); // known not to exist: no request either
      // An included document does not take the type of the documents that referenced it.
      expect(companies['companies/2']).not.toBeInstanceOf(User);
    });

    it('makes no request when every document and every include is already known', async () => {
      const session = store.openSession();
      await session.load(['users/joan', 'users/radia'], { includes: ['Company'] });
      const joan = await session.load<User>('users/joan');
      expect(await session.load(['users/joan', 'users/radia'], { includes: ['Company'] })).toMatchObject({
        'users/joan': joan,
      });
      expect(session.advanced.numberOfRequests).toBe(1);
      // An include reached through a local change is fetched: the next load of it follows the change.
      joan!.Company = 'companies/3';
      await session.load('users/joan', { includes: ['Company'] });
      expect(session.advanced.numberOfRequests).toBe(2);
      expect(await session.load('companies/3')).toMatchObject({ Name: 'Umbrella' });
      expect(session.advanced.numberOfRequests).toBe(2);
    });
  });

  it('stops a session that makes too many requests', async () => {
    const session = store.openSession();
    const error = await (async () => {
      for (let i = 0; i < 100; i++) await session.load(`nothing/${i}`);
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TooManyRequestsInSessionError);
    expect(session.advanced.numberOfRequests).toBe(store.conventions.maxNumberOfRequestsPerSession);
  });
});

describe('queries', () => {
  beforeAll(async () => {
    const session = store.openSession();
    const rows: [string, number, string, string[]][] = [
      ['Ann', 25, 'Paris', ['a', 'b']],
      ['Bob', 35, 'London', ['b']],
      ['Cid', 45, 'London', ['a', 'c']],
      ['Dee', 55, 'Paris', ['c']],
      ['Eve', 65, 'Rome', ['a', 'b', 'c']],
    ];
    for (const [i, [Name, Age, City, Tags]] of rows.entries()) {
      await session.store(
        {
          Name,
          Age,
          City,
          Tags,
          Text: `${Name} from ${City}`,
          Friend: 'people/1',
          '@metadata': { '@collection': 'Members' },
        },
        `members/${i + 1}`,
      );
    }
    await session.saveChanges();
    const index = await env.admin.call('PUT', '/databases/shop/indexes', {
      Name: 'Members/Search',
      Maps: [{ Collection: 'Members', Fields: { Text: 'Text', City: 'City', Age: 'Age' } }],
      Fields: { Text: { Indexing: 'Search' } },
    });
    expect(index.status).toBe(201);
  });

  it('filters, orders, pages and reports statistics; documents go through the identity map', async () => {
    const session = store.openSession();
    const stats: {
      TotalResults?: number;
      IndexName?: string | null;
      IsStale?: boolean;
      DurationInMs?: number;
    } = {};
    const q = session
      .query<{ Name: string; Age: number }>({ collection: 'Members' })
      .whereGreaterThanOrEqual('Age', 30)
      .andAlso()
      .openSubclause()
      .whereEquals('City', 'London')
      .orElse()
      .whereEquals('City', 'Rome')
      .closeSubclause()
      .orderByDescending('Age', 'long')
      .statistics(stats)
      .waitForNonStaleResults();
    expect(q.toString()).toContain('where Age >= $p0 and (City = $p1 or City = $p2)');
    const results = await q.toList();
    expect(results.map((r) => r.Name)).toEqual(['Eve', 'Cid', 'Bob']);
    expect(stats).toMatchObject({ TotalResults: 3, IsStale: false });
    expect(stats.IndexName).toMatch(/^Auto\/Members/);
    expect(typeof stats.DurationInMs).toBe('number');
    expect(await session.load('members/5')).toBe(results[0]);

    const members = () => session.query<{ Name: string }>({ collection: 'Members' }).waitForNonStaleResults();
    expect(
      (await members().whereIn('Name', ['Ann', 'Dee']).orderBy('Name').toList()).map((r) => r.Name),
    ).toEqual(['Ann', 'Dee']);
    expect(await members().containsAll('Tags', ['a', 'c']).count()).toBe(2);
    expect((await members().whereStartsWith('Name', 'e').single()).Name).toBe('Eve');
    expect((await members().whereEndsWith('Name', 'b').first())?.Name).toBe('Bob');
    expect(await members().whereBetween('Age', 30, 50).count()).toBe(2);
    expect(await members().not.whereEquals('City', 'Paris').count()).toBe(3);
    expect(await members().whereLessThan('Age', 20).any()).toBe(false);
    expect(await members().whereExists('Tags').whereNotEquals('Name', 'Ann').count()).toBe(4);
    expect((await members().orderBy('Name').skip(3).take(1).toList()).map((r) => r.Name)).toEqual(['Dee']);
    await expect(members().whereGreaterThan('Age', 30).single()).rejects.toBeInstanceOf(NonUniqueResultError);
    const projected = await members()
      .whereEquals('Name', 'Ann')
      .selectFields('Name', { field: 'City', as: 'Town' })
      .toList();
    expect(projected).toEqual([{ Name: 'Ann', Town: 'Paris' }]);
  });

  // With a limit the engine walks the order field instead of sorting the candidates; that walk once
  // tested only part of `a and (b or c)` and returned Dee, of Paris.
  it('pages `a and (b or c)` ordered by a field with only matching rows', async () => {
    const session = store.openSession();
    const page = await session
      .query<{ Name: string }>({ collection: 'Members' })
      .whereGreaterThanOrEqual('Age', 30)
      .openSubclause()
      .whereEquals('City', 'London')
      .orElse()
      .whereEquals('City', 'Rome')
      .closeSubclause()
      .orderByDescending('Age')
      .take(2)
      .waitForNonStaleResults()
      .toList();
    expect(page.map((r) => r.Name)).toEqual(['Eve', 'Cid']);
  });

  it('runs full-text search, facets and suggestions on a static index', async () => {
    const session = store.openSession();
    const index = () =>
      session.query<{ Name: string }>({ indexName: 'Members/Search' }).waitForNonStaleResults();
    expect((await index().search('Text', 'london').orderBy('Age').toList()).map((r) => r.Name)).toEqual([
      'Bob',
      'Cid',
    ]);
    expect(await index().search('Text', 'eve rome', 'and').count()).toBe(1);
    const facets = await index()
      .aggregateBy(
        facet('City'),
        rangeFacet([range('Age').lessThan(40), range('Age').greaterThanOrEqual(40)], 'Ages'),
      )
      .execute();
    expect(facets.City?.Values).toEqual(
      expect.arrayContaining([
        { Range: 'paris', Count: 2 },
        { Range: 'london', Count: 2 },
        { Range: 'rome', Count: 1 },
      ]),
    );
    expect(facets.Ages?.Values).toEqual([
      { Range: 'Age < 40', Count: 2 },
      { Range: 'Age >= 40', Count: 3 },
    ]);
    const suggestions = await index().suggestUsing({ field: 'Text', term: 'lndon' }).execute();
    expect(suggestions.Text?.Suggestions).toContain('london');
  });

  it('caches query answers by ETag: the same query again is a 304 served from the cache', async () => {
    const q = () =>
      store
        .openSession()
        .query({ collection: 'Members' })
        .whereGreaterThan('Age', 40)
        .waitForNonStaleResults()
        .toList();
    const first = await q();
    const before = { ...store.requestCounters };
    const second = await q();
    expect(second).toEqual(first);
    expect(store.requestCounters.sent - before.sent).toBe(1);
    expect(store.requestCounters.notModified - before.notModified).toBe(1);
    // A long query goes as POST and is cached the same way.
    const long = () =>
      store
        .openSession()
        .query({ collection: 'Members' })
        .whereIn('Name', Array.from({ length: 300 }, (_, i) => `name-${i}-${'x'.repeat(10)}`).concat('Ann'))
        .waitForNonStaleResults()
        .toList();
    expect(await long()).toHaveLength(1);
    const beforeLong = { ...store.requestCounters };
    expect(await long()).toHaveLength(1);
    expect(store.requestCounters.notModified - beforeLong.notModified).toBe(1);
    // A document load revalidates too.
    const session = store.openSession();
    await session.load('members/1');
    const beforeLoad = store.requestCounters.notModified;
    await store.openSession().load('members/1');
    expect(store.requestCounters.notModified - beforeLoad).toBe(1);
  });

  it('raises typed errors for bad queries and unknown indexes', async () => {
    const session = store.openSession();
    await expect(session.query({ indexName: 'Nope' }).toList()).rejects.toBeInstanceOf(IndexNotFoundError);
    await expect(
      session.query({ indexName: 'Members/Search' }).whereGreaterThan('Text', 'a').toList(),
    ).rejects.toBeInstanceOf(InvalidQueryError);
  });
});

describe('errors and authentication', () => {
  it('raises DatabaseNotFoundError for a database that does not exist', async () => {
    const elsewhere = env.store(undefined, { database: 'nowhere' });
    await expect(elsewhere.openSession().query({ collection: 'Users' }).toList()).rejects.toBeInstanceOf(
      DatabaseNotFoundError,
    );
  });

  it('presents a PKCS#12 bundle with its passphrase as well as PEM files', async () => {
    const bundled = await env.principal({ kind: 'program', name: 'bundled', role: { kind: 'tenant-admin' } });
    const issued = await env.admin.call('POST', `/control/principals/${bundled.principal.id}/certificates`, {
      pkcs12Password: 'correct horse',
    });
    expect(issued.status).toBe(201);
    const pfxStore = new DocumentStore({
      url: env.stack.gateway.url,
      database: env.database,
      certificate: {
        pfx: Buffer.from(issued.json.pkcs12Base64 as string, 'base64'),
        passphrase: 'correct horse',
      },
      ca: env.stack.ca.certPem,
    }).initialize();
    try {
      const session = pfxStore.openSession();
      await session.store({ Kind: 'pkcs12', '@metadata': { '@collection': 'Notes' } }, 'notes/pfx');
      await session.saveChanges();
      expect(await env.store().openSession().load('notes/pfx')).toMatchObject({ Kind: 'pkcs12' });
    } finally {
      await pfxStore.close();
    }
  });

  it('surfaces 429 as RateLimitedError with Retry-After, and waits it out when the conventions say so', async () => {
    await env.stack.store.createTenant({
      id: 'tiny',
      name: 'Tiny',
      quota: { requestsPerSecond: 3, storageBytes: 2 ** 30 },
    });
    const admin = await env.stack.client({
      tenantId: 'tiny',
      kind: 'program',
      name: 'tiny',
      role: { kind: 'tenant-admin' },
    });
    expect((await admin.call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
    const tiny = env.store(admin);
    const error = await (async () => {
      for (let i = 0; i < 20; i++) await tiny.openSession().load(`users/${i}`);
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    const patient = env.store(admin, { conventions: { retryOnRateLimit: true } });
    for (let i = 0; i < 8; i++) expect(await patient.openSession().load(`users/${i}`)).toBeNull();
    expect(patient.requestCounters.retries).toBeGreaterThan(0);
  });

  it('raises CertificateRevokedError once the certificate is revoked', async () => {
    const victim = await env.principal({ kind: 'program', name: 'victim', role: { kind: 'tenant-admin' } });
    const victimStore = env.store(victim);
    expect(await victimStore.openSession().load('people/1')).toMatchObject({ Name: 'Grace' });
    await env.stack.store.revokeCertificate(victim.serial, Date.now());
    let error: unknown = null;
    for (let i = 0; i < 50 && error === null; i++) {
      error = await victimStore
        .openSession()
        .load('people/1')
        .then(() => null)
        .catch((e: unknown) => e);
      if (error === null) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(error).toBeInstanceOf(CertificateRevokedError);
  });

  it("holds a person's requests to a two-factor session, opened with a TOTP code", async () => {
    const ada = await env.principal({ kind: 'person', name: 'ada', role: { kind: 'tenant-admin' } });
    const enrolment = await env.admin.call('POST', `/control/principals/${ada.principal.id}/totp`, {});
    expect(enrolment.status).toBe(201);
    const personStore = env.store(ada);
    const refused = await personStore
      .openSession()
      .load('users/1')
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TwoFactorRequiredError);
    expect((refused as TwoFactorRequiredError).detail).toContain('/auth/2fa');
    const session = await personStore.authenticateTwoFactor(totpCode(enrolment.json.secret as string), {
      sessionDurationMinutes: 5,
    });
    expect(session.expiresAt.getTime()).toBeGreaterThan(Date.now());
    expect(await personStore.openSession().load('people/1')).toMatchObject({ Name: 'Grace' });
    // Bound to the certificate (the default): any store presenting it is let in.
    expect(await env.store(ada).openSession().load('people/1')).toMatchObject({ Name: 'Grace' });
  });

  it("binds a two-factor session to the one store that opened it with binding 'store', WebSockets included", async () => {
    const { client: person, secret } = await env.stack.person('hopper', env.tenantId);
    const bound = env.store(person);
    const sibling = env.store(person); // the same certificate, without the session's cookie
    await bound.authenticateTwoFactor(totpCode(secret), { binding: 'store', sessionDurationMinutes: 5 });
    expect(await bound.openSession().load('people/1')).toMatchObject({ Name: 'Grace' });
    await expect(sibling.openSession().load('people/1')).rejects.toBeInstanceOf(TwoFactorRequiredError);

    const watch = bound.changes().forDocument('people/1');
    await watch.ensureSubscribedNow();
    await expect(sibling.changes().forDocument('people/1').ensureSubscribedNow()).rejects.toBeInstanceOf(
      TwoFactorRequiredError,
    );
    watch.close();
  });
});
