// The official `ravendb` client's document path against Rookery (fixture.ts): the setup calls every client
// makes, sessions storing with explicit and HiLo ids, loads with includes, deletes, and optimistic
// concurrency answered with the client's own ConcurrencyException carrying Rookery's message.
import { type DocumentStore, GetStatisticsOperation } from 'ravendb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RavenFixture, startRavenFixture } from './fixture.js';

class User {
  public name = '';
  public age = 0;
  public companyId: string | null = null;
  constructor(init?: Partial<User>) {
    Object.assign(this, init);
  }
}
class Company {
  public name = '';
  constructor(init?: Partial<Company>) {
    Object.assign(this, init);
  }
}

let fixture: RavenFixture;
let store: DocumentStore;

beforeAll(async () => {
  fixture = await startRavenFixture('raven-docs');
  await fixture.createDatabase('shop');
  store = await fixture.store('shop');
}, 120_000);
afterAll(async () => {
  await fixture?.close();
});

describe('the official ravendb client: documents', () => {
  it('reads the database statistics (every client test starts with it)', async () => {
    const stats = await store.maintenance.send(new GetStatisticsOperation());
    expect(stats.countOfDocuments).toBeTypeOf('number');
    expect(Array.isArray(stats.indexes)).toBe(true);
  });

  it('stores with an explicit id, loads it back with its metadata', async () => {
    const session = store.openSession();
    const ada = new User({ name: 'Ada', age: 36 });
    await session.store(ada, 'users/ada');
    await session.saveChanges();
    expect(session.advanced.getChangeVectorFor(ada)).toBeTruthy();

    const loaded = await store.openSession().load<User>('users/ada', User);
    expect(loaded).toBeInstanceOf(User);
    expect(loaded?.name).toBe('Ada');
  });

  it('stores with HiLo ids: distinct ids in the collection, and the range is returned on close', async () => {
    const session = store.openSession();
    const first = new Company({ name: 'Acme' });
    const second = new Company({ name: 'Initech' });
    await session.store(first);
    await session.store(second);
    await session.saveChanges();
    const ids = [session.advanced.getDocumentId(first), session.advanced.getDocumentId(second)];
    expect(ids[0]).toMatch(/^companies\/\d+-[A-Z]$/);
    expect(new Set(ids).size).toBe(2);
    const again = await store.openSession().load<Company>(ids[1]!, Company);
    expect(again?.name).toBe('Initech');
  });

  it('loads with includes: the referenced document is served from the session', async () => {
    const setup = store.openSession();
    await setup.store(new Company({ name: 'Hooli' }), 'companies/hooli');
    await setup.store(new User({ name: 'Gavin', companyId: 'companies/hooli' }), 'users/gavin');
    await setup.saveChanges();

    const session = store.openSession();
    const gavin = await session.include('companyId').load<User>('users/gavin', User);
    const company = await session.load<Company>(gavin!.companyId!, Company);
    expect(company?.name).toBe('Hooli');
    expect(session.advanced.numberOfRequests).toBe(1);
  });

  it('loads many at once, with null for a missing id', async () => {
    const session = store.openSession();
    const found = await session.load<User>(['users/ada', 'users/nobody'], User);
    expect(found['users/ada']?.name).toBe('Ada');
    expect(found['users/nobody']).toBeNull();
  });

  it('deletes a document', async () => {
    const setup = store.openSession();
    await setup.store(new User({ name: 'Temp' }), 'users/temp');
    await setup.saveChanges();
    const session = store.openSession();
    session.delete('users/temp');
    await session.saveChanges();
    expect(await store.openSession().load('users/temp')).toBeNull();
  });

  it('optimistic concurrency: a stale change vector fails with ConcurrencyException and Rookery’s message', async () => {
    const setup = store.openSession();
    await setup.store(new User({ name: 'Conc', age: 1 }), 'users/conc');
    await setup.saveChanges();

    const stale = store.openSession();
    stale.advanced.useOptimisticConcurrency = true;
    const mine = await stale.load<User>('users/conc', User);

    const other = store.openSession();
    const theirs = await other.load<User>('users/conc', User);
    theirs!.age = 2;
    await other.saveChanges();

    mine!.age = 3;
    const failure = await stale.saveChanges().then(
      () => null,
      (error: unknown) => error,
    );
    // The client's exceptions are Errors named by their RavenDB type.
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).name).toBe('ConcurrencyException');
    expect((failure as Error).message).toMatch(/users\/conc/);
    expect((await store.openSession().load<User>('users/conc', User))?.age).toBe(2);
  });
});

describe("the official ravendb client with a person's certificate", () => {
  it('without a two-factor session every request fails with AuthenticationException naming TwoFactorRequired', async () => {
    const person = await fixture.personStore('Ada Lovelace', 'shop', false);
    const failure = await person
      .openSession()
      .load('users/ada')
      .then(
        () => null,
        (error: unknown) => error as Error,
      );
    expect(failure?.name).toBe('AuthenticationException');
    expect(failure?.message).toMatch(/POST \/auth\/2fa/);
  });

  it('with a session bound to the certificate, stores and loads like a program', async () => {
    const person = await fixture.personStore('Grace Hopper', 'shop', true);
    const session = person.openSession();
    await session.store(new User({ name: 'Grace', age: 85 }), 'users/grace');
    await session.saveChanges();
    expect((await person.openSession().load<User>('users/grace', User))?.age).toBe(85);
  });
});
