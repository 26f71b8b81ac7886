// The official `ravendb` client's administration against Rookery (fixture.ts): index definitions read back
// with GetIndexesOperation, databases created and deleted with CreateDatabaseOperation and
// DeleteDatabasesOperation (what has no meaning in Rookery refused by name), and subscriptions created and
// listed (their worker: subscriptions-worker.ravendb.test.ts).
import {
  CreateDatabaseOperation,
  DeleteDatabasesOperation,
  type DocumentStore,
  GetIndexesOperation,
  type IndexDefinition,
  PutIndexesOperation,
} from 'ravendb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RavenFixture, startRavenFixture } from './fixture.js';

let fixture: RavenFixture;
let store: DocumentStore;

beforeAll(async () => {
  fixture = await startRavenFixture('raven-admin');
  await fixture.createDatabase('office');
  store = await fixture.store('office');
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

describe('the official ravendb client: indexes', () => {
  it('GetIndexesOperation reads back the definitions it put', async () => {
    const definition: IndexDefinition = Object.assign(Object.create(null), {
      name: 'Users/ByName',
      maps: new Set(["map('Users', u => ({ name: u.name }))"]),
    });
    await store.maintenance.send(new PutIndexesOperation(definition));
    const indexes = await store.maintenance.send(new GetIndexesOperation(0, 10));
    const found = indexes.find((index) => index.name === 'Users/ByName');
    expect(found).toBeDefined();
    expect([...found!.maps]).toEqual(["map('Users', u => ({ name: u.name }))"]);
    expect(found!.type).toBe('JavaScriptMap');
  });
});

describe('the official ravendb client: databases', () => {
  it('CreateDatabaseOperation creates a database the client then uses; DeleteDatabasesOperation deletes it', async () => {
    await store.maintenance.server.send(new CreateDatabaseOperation({ databaseName: 'Scratch' }));
    const scratch = await fixture.store('Scratch');
    const session = scratch.openSession();
    await session.store({ name: 'note' }, 'notes/1');
    await session.saveChanges();
    expect((await fixture.admin.call('GET', '/databases')).text).toContain('Scratch');
    expect((await fixture.admin.call('GET', '/control/databases')).text).toContain('Scratch');

    const deleted = await store.maintenance.server.send(
      new DeleteDatabasesOperation({ databaseNames: ['Scratch'], hardDelete: true }),
    );
    expect(deleted.pendingDeletes).toEqual([]);
    expect((await fixture.admin.call('GET', '/databases')).text).not.toContain('Scratch');
    // The control store's record goes too, though the DELETE named the database in its body, not its URL.
    expect((await fixture.admin.call('GET', '/control/databases')).text).not.toContain('Scratch');
    const gone = await failureOf(scratch.openSession().load('notes/1'));
    expect(gone.name).toBe('DatabaseDoesNotExistException');
  });

  it('refuses by name what a Rookery database cannot be (encrypted, disabled, settings, a soft delete)', async () => {
    const encrypted = await failureOf(
      store.maintenance.server.send(new CreateDatabaseOperation({ databaseName: 'Secret', encrypted: true })),
    );
    expect(encrypted.name).toBe('BadRequestException');
    expect(encrypted.message).toMatch(/Encrypted/);
    const soft = await failureOf(
      store.maintenance.server.send(
        new DeleteDatabasesOperation({ databaseNames: ['office'], hardDelete: false }),
      ),
    );
    expect(soft.name).toBe('BadRequestException');
    expect(soft.message).toMatch(/HardDelete/);
    expect((await fixture.admin.call('GET', '/databases')).text).toContain('office');
  });
});

describe('the official ravendb client: subscriptions', () => {
  it('creates a subscription (sent without a Content-Type) and lists it', async () => {
    const name = await store.subscriptions.create({ name: 'new-users', query: 'from Users' });
    expect(name).toBe('new-users');
    const listed = await store.subscriptions.getSubscriptions(0, 10);
    expect(listed.map((s) => [s.subscriptionName, s.query])).toEqual([['new-users', 'from Users']]);
  });
});
