// The official `ravendb` client's changes feed against Rookery (fixture.ts), through the gateway's WebSocket
// proxy: every document (`watch-docs`, Rookery's `watch-all-docs`) and one collection, with the collection
// name where the client reads it.
import {
  AbstractJavaScriptIndexCreationTask,
  type DocumentChange,
  type DocumentStore,
  type IndexChange,
} from 'ravendb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RavenFixture, startRavenFixture } from './fixture.js';

let fixture: RavenFixture;
let store: DocumentStore;

beforeAll(async () => {
  fixture = await startRavenFixture('raven-changes');
  await fixture.createDatabase('feed');
  store = await fixture.store('feed');
}, 120_000);
afterAll(async () => {
  await fixture?.close();
});

/** The next change `observable` delivers that satisfies `wanted`. */
function nextChange(
  observable: { on(event: 'data', listener: (change: DocumentChange) => void): unknown },
  wanted: (change: DocumentChange) => boolean,
): Promise<DocumentChange> {
  return new Promise((resolve) => {
    observable.on('data', (change) => {
      if (wanted(change)) resolve(change);
    });
  });
}

describe('the official ravendb client: changes', () => {
  it('forAllDocuments and forDocumentsInCollection deliver a committed change, with its collection name', async () => {
    const changes = store.changes();
    await changes.ensureConnectedNow();
    const all = changes.forAllDocuments();
    const users = changes.forDocumentsInCollection('Users');
    const anyChange = nextChange(all, (change) => change.id === 'users/1');
    const userChange = nextChange(users, (change) => change.id === 'users/1');
    await all.ensureSubscribedNow();
    await users.ensureSubscribedNow();

    const session = store.openSession();
    await session.store({ name: 'Ada', '@metadata': { '@collection': 'Users' } }, 'users/1');
    await session.saveChanges();

    expect(await anyChange).toMatchObject({ id: 'users/1', type: 'Put', collectionName: 'Users' });
    expect((await userChange).changeVector).toBeTruthy();
  });

  it("forAllIndexes (RavenDB's watch-indexes) delivers an index being added", async () => {
    class Users_ByName extends AbstractJavaScriptIndexCreationTask<{ name: string }> {
      public constructor() {
        super();
        this.map('Users', (user) => ({ name: user.name }));
      }
    }
    const changes = store.changes();
    const indexes = changes.forAllIndexes();
    const added = new Promise<IndexChange>((resolve) => {
      indexes.on('data', (change) => {
        if (change.name === 'Users/ByName') resolve(change);
      });
    });
    await indexes.ensureSubscribedNow();
    await new Users_ByName().execute(store);
    expect((await added).type).toBeTruthy();
  });
});
