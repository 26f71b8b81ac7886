// The official `ravendb` client's index operations against Rookery (fixture.ts): JavaScript index creation
// tasks, PutIndexesOperation (sent to /admin/indexes), and C#-syntax maps refused with a message that names
// JavaScript indexes.
import {
  AbstractJavaScriptIndexCreationTask,
  type DocumentStore,
  GetIndexNamesOperation,
  IndexDefinition,
  PutIndexesOperation,
} from 'ravendb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RavenFixture, startRavenFixture } from './fixture.js';

class Author {
  public name = '';
  public books = 0;
  constructor(init?: Partial<Author>) {
    Object.assign(this, init);
  }
}

class Authors_ByName extends AbstractJavaScriptIndexCreationTask<Author> {
  public constructor() {
    super();
    this.map('Authors', (author) => ({ name: author.name }));
  }
}

let fixture: RavenFixture;
let store: DocumentStore;

beforeAll(async () => {
  fixture = await startRavenFixture('raven-indexes');
  await fixture.createDatabase('library');
  store = await fixture.store('library');
  const session = store.openSession();
  await session.store(new Author({ name: 'Ursula', books: 23 }), 'authors/ursula');
  await session.store(new Author({ name: 'Italo', books: 17 }), 'authors/italo');
  await session.saveChanges();
}, 120_000);
afterAll(async () => {
  await fixture?.close();
});

describe('the official ravendb client: indexes', () => {
  it('a JavaScript index creation task creates the index, and queries use it', async () => {
    await new Authors_ByName().execute(store);
    const found = await store
      .openSession()
      .query<Author>({ indexName: 'Authors/ByName', documentType: Author })
      .waitForNonStaleResults()
      .whereEquals('name', 'Italo')
      .all();
    expect(found.map((a) => a.books)).toEqual([17]);
  });

  it('PutIndexesOperation answers each index by name, and the index is listed', async () => {
    const definition = new IndexDefinition();
    definition.name = 'Authors/ByBooks';
    definition.maps = new Set(["map('Authors', a => ({ books: a.books }))"]);
    const results = await store.maintenance.send(new PutIndexesOperation(definition));
    expect(results.map((r) => r.index)).toEqual(['Authors/ByBooks']);
    const names = await store.maintenance.send(new GetIndexNamesOperation(0, 100));
    expect(names).toEqual(expect.arrayContaining(['Authors/ByName', 'Authors/ByBooks']));
    const prolific = await store
      .openSession()
      .query<Author>({ indexName: 'Authors/ByBooks', documentType: Author })
      .waitForNonStaleResults()
      .whereGreaterThan('books', 20)
      .all();
    expect(prolific.map((a) => a.name)).toEqual(['Ursula']);
  });

  it('a C#-syntax map is refused with IndexCompilationException naming JavaScript indexes', async () => {
    const definition = new IndexDefinition();
    definition.name = 'Authors/Linq';
    definition.maps = new Set(['from a in docs.Authors select new { a.name }']);
    const error = await store.maintenance.send(new PutIndexesOperation(definition)).then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.name).toBe('IndexCompilationException');
    expect(error?.message).toMatch(/JavaScript/);
  });
});
