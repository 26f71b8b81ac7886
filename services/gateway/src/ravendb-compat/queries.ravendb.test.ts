// The official `ravendb` client's queries against Rookery (fixture.ts): the query builder with statistics and
// waiting for non-stale results, raw RQL with parameters, paging, and errors surfacing as the client's own
// exception types with Rookery's message.
import { type DocumentStore, GetStatisticsOperation, type QueryStatistics } from 'ravendb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RavenFixture, startRavenFixture } from './fixture.js';

class Person {
  public name = '';
  public age = 0;
  constructor(init?: Partial<Person>) {
    Object.assign(this, init);
  }
}

let fixture: RavenFixture;
let store: DocumentStore;

beforeAll(async () => {
  fixture = await startRavenFixture('raven-queries');
  await fixture.createDatabase('people');
  store = await fixture.store('people');
  const session = store.openSession();
  const people = [
    ['Ada', 36],
    ['Grace', 85],
    ['Alan', 41],
    ['Edsger', 72],
    ['Barbara', 36],
  ] as const;
  for (const [name, age] of people)
    await session.store(new Person({ name, age }), `people/${name.toLowerCase()}`);
  await session.saveChanges();
}, 120_000);
afterAll(async () => {
  await fixture?.close();
});

function failureOf(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: Error) => error,
  );
}

describe('the official ravendb client: queries', () => {
  it('whereEquals().orderBy().take() with statistics, waiting for non-stale results', async () => {
    let stats: QueryStatistics | undefined;
    const found = await store
      .openSession()
      .query<Person>({ collection: 'People', documentType: Person })
      .waitForNonStaleResults()
      .statistics((s) => {
        stats = s;
      })
      .whereEquals('age', 36)
      .orderBy('name')
      .take(10)
      .all();
    expect(found.map((p) => p.name)).toEqual(['Ada', 'Barbara']);
    expect(found[0]).toBeInstanceOf(Person);
    expect(stats?.totalResults).toBe(2);
    expect(stats?.isStale).toBe(false);
    expect(stats?.indexName).toBeTruthy();
  });

  it('pages with skip and take, and without waiting', async () => {
    const session = store.openSession();
    const all = await session
      .query<Person>({ collection: 'People' })
      .orderBy('name')
      .waitForNonStaleResults()
      .all();
    expect(all.map((p) => p.name)).toEqual(['Ada', 'Alan', 'Barbara', 'Edsger', 'Grace']);
    const page = await session.query<Person>({ collection: 'People' }).orderBy('name').skip(1).take(2).all();
    expect(page.map((p) => p.name)).toEqual(['Alan', 'Barbara']);
    const firstTwo = await session.query<Person>({ collection: 'People' }).orderBy('name').take(2).all();
    expect(firstTwo.map((p) => p.name)).toEqual(['Ada', 'Alan']);
  });

  it('rawQuery with parameters, counted, and first()', async () => {
    const session = store.openSession();
    const older = await session.advanced
      .rawQuery<Person>('from People where age > $min order by age desc', Person)
      .addParameter('min', 60)
      .waitForNonStaleResults()
      .all();
    expect(older.map((p) => p.name)).toEqual(['Grace', 'Edsger']);
    expect(await session.query<Person>({ collection: 'People' }).whereGreaterThan('age', 40).count()).toBe(3);
    const first = await session.query<Person>({ collection: 'People' }).whereEquals('name', 'Alan').first();
    expect(first.age).toBe(41);
  });

  it('waitForIndexing as the client’s own test suite does: the statistics list the indexes, none stale', async () => {
    const stats = await store.maintenance.send(new GetStatisticsOperation());
    expect(stats.indexes.length).toBeGreaterThan(0);
    expect(stats.indexes.every((index) => index.isStale === false || index.isStale === true)).toBe(true);
  });

  it('a malformed query fails with InvalidQueryException carrying Rookery’s message', async () => {
    const error = await failureOf(store.openSession().advanced.rawQuery('from People where').all());
    expect(error.name).toBe('InvalidQueryException');
    expect(error.message.length).toBeGreaterThan(20);
  });

  it('a database that does not exist fails with DatabaseDoesNotExistException', async () => {
    const missing = await fixture.store('nowhere');
    const error = await failureOf(missing.openSession().load('people/ada'));
    expect(error.name).toBe('DatabaseDoesNotExistException');
  });
});
