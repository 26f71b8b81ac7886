// The official `ravendb` client's subscription worker against Rookery (fixture.ts): it asks the gateway
// `GET /info/remote-task/tcp` where to connect, then speaks RavenDB's TCP protocol to the gateway's TCP
// listener (ravendb-tcp/), which carries it onto Rookery's subscription WebSocket to the tenant. Batches,
// acknowledgements, a second worker resuming after the first one's acknowledgements, the client's typed
// exceptions (an unknown subscription, another tenant's, an option Rookery has no meaning for), dispose.
import type { DocumentStore, SubscriptionBatch, SubscriptionWorker } from 'ravendb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RavenFixture, startRavenFixture } from './fixture.js';

let fixture: RavenFixture;
let store: DocumentStore;

beforeAll(async () => {
  fixture = await startRavenFixture('raven-worker');
  await fixture.createDatabase('office');
  store = await fixture.store('office');
}, 120_000);
afterAll(async () => {
  await fixture?.close();
});

interface User {
  name: string;
}

async function storeUsers(ids: string[]): Promise<void> {
  const session = store.openSession();
  for (const id of ids) await session.store({ name: id, '@metadata': { '@collection': 'Users' } }, id);
  await session.saveChanges();
}

/** Collects the ids of every batch's items; `until` resolves once `count` ids have come in. */
function collect(worker: SubscriptionWorker<User>) {
  const ids: string[] = [];
  const batchSizes: number[] = [];
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  let failure: Error | null = null;
  const failed = new Promise<never>((_, reject) => {
    worker.on('error', (error?: Error) => {
      failure = error ?? new Error('the worker failed without an error');
      reject(failure);
    });
  });
  failed.catch(() => {});
  worker.on('batch', (batch: SubscriptionBatch<User>, done: (error?: Error) => void) => {
    batchSizes.push(batch.items.length);
    for (const item of batch.items) {
      expect(item.result.name).toBe(item.id);
      ids.push(item.id);
    }
    done();
    for (const w of waiting.splice(0)) {
      if (ids.length >= w.count) w.resolve();
      else waiting.push(w);
    }
  });
  return {
    ids,
    batchSizes,
    get failure() {
      return failure;
    },
    until(count: number): Promise<void> {
      if (ids.length >= count) return Promise.resolve();
      return Promise.race([failed, new Promise<void>((resolve) => waiting.push({ count, resolve }))]);
    },
  };
}

/** The subscription's state as Rookery reports it. */
async function stateOf(name: string): Promise<{ Connected: boolean; LastAcknowledgedEtag: number }> {
  const reply = await fixture.admin.call('GET', `/databases/office/subscriptions/${name}`);
  expect(reply.status).toBe(200);
  return reply.json as { Connected: boolean; LastAcknowledgedEtag: number };
}

/** Resolves once Rookery no longer counts a consumer on the subscription (the worker's connection ended). */
async function released(name: string): Promise<void> {
  while ((await stateOf(name)).Connected) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** The error the worker stops with (it stops on the client's non-retryable exception types). */
function stoppedWith(worker: SubscriptionWorker<User>): Promise<Error> {
  return new Promise<Error>((resolve, reject) => {
    worker.on('error', (error?: Error) => resolve(error ?? new Error('an error without an error')));
    worker.on('end', () => reject(new Error('the worker ended without an error')));
    worker.on('batch', (_batch: SubscriptionBatch<User>, done: () => void) => done());
  });
}

describe('the official ravendb client: the subscription worker over TCP', () => {
  it('delivers documents written before and after it starts, in batches; a second worker gets only what is new', async () => {
    await storeUsers(['users/1', 'users/2', 'users/3']);
    await store.subscriptions.create({ name: 'all-users', query: 'from Users' });

    const first = store.subscriptions.getSubscriptionWorker<User>({
      subscriptionName: 'all-users',
      maxDocsPerBatch: 2,
    });
    const acknowledged: number[] = [];
    first.on('afterAcknowledgment', (batch: SubscriptionBatch<User>) =>
      acknowledged.push(batch.getNumberOfItemsInBatch()),
    );
    const seen = collect(first);
    await seen.until(3);
    await storeUsers(['users/4']);
    await seen.until(4);
    expect(seen.ids).toEqual(['users/1', 'users/2', 'users/3', 'users/4']);
    // maxDocsPerBatch is the batch size: three documents already there come as two batches.
    expect(seen.batchSizes.slice(0, 2)).toEqual([2, 1]);
    // The gateway confirms each acknowledgement once the tenant has it; the last batch's ack is recorded
    // before the subscription is let go.
    const progress = (await stateOf('all-users')).LastAcknowledgedEtag;
    expect(progress).toBeGreaterThan(0);
    first.dispose();
    await released('all-users');
    expect(seen.failure).toBeNull();
    expect(acknowledged.length).toBeGreaterThanOrEqual(2);

    await storeUsers(['users/5']);
    const second = store.subscriptions.getSubscriptionWorker<User>({ subscriptionName: 'all-users' });
    const next = collect(second);
    await next.until(1);
    expect(next.ids).toEqual(['users/5']);
    second.dispose();
    await released('all-users');
    expect(next.failure).toBeNull();
  });

  it('an unknown subscription stops the worker with SubscriptionDoesNotExistException', async () => {
    const worker = store.subscriptions.getSubscriptionWorker<User>({ subscriptionName: 'no-such-thing' });
    const error = await stoppedWith(worker);
    worker.dispose();
    expect(error.name).toBe('SubscriptionDoesNotExistException');
    expect(error.message).toMatch(/no-such-thing/);
  });

  it("another tenant's certificate cannot reach this tenant's subscription: its own tenant has no such database", async () => {
    const other = await fixture.stack.tenantAdmin({ id: 'raven-worker-b', name: 'b' }, 'b-admin');
    await fixture.stack.running('raven-worker-b');
    const otherStore = await fixture.storeFor(other, 'office');
    const worker = otherStore.subscriptions.getSubscriptionWorker<User>({ subscriptionName: 'all-users' });
    const error = await stoppedWith(worker);
    worker.dispose();
    expect(error.name).toBe('DatabaseDoesNotExistException');
  });

  it('an option Rookery cannot honour (the Concurrent strategy) stops the worker with SubscriptionInvalidStateException naming it', async () => {
    const worker = store.subscriptions.getSubscriptionWorker<User>({
      subscriptionName: 'all-users',
      strategy: 'Concurrent',
    });
    const error = await stoppedWith(worker);
    worker.dispose();
    expect(error.name).toBe('SubscriptionInvalidStateException');
    expect(error.message).toMatch(/Concurrent/);
  });

  it('a second worker with OpenIfFree while one is connected gets SubscriptionInUseException', async () => {
    const holder = store.subscriptions.getSubscriptionWorker<User>({ subscriptionName: 'all-users' });
    const established = new Promise<void>((resolve) =>
      holder.on('onEstablishedSubscriptionConnection', () => resolve()),
    );
    const held = collect(holder);
    await established;
    const second = store.subscriptions.getSubscriptionWorker<User>({ subscriptionName: 'all-users' });
    const error = await stoppedWith(second);
    second.dispose();
    expect(error.name).toBe('SubscriptionInUseException');
    holder.dispose();
    await released('all-users');
    expect(held.failure).toBeNull();
  });

  it("a person's worker runs under the two-factor session bound to their certificate", async () => {
    await store.subscriptions.create({ name: 'for-a-person', query: 'from Users' });
    const personStore = await fixture.personStore('tcp-person', 'office', true);
    const worker = personStore.subscriptions.getSubscriptionWorker<User>({
      subscriptionName: 'for-a-person',
    });
    const seen = collect(worker);
    await seen.until(1);
    expect(seen.ids[0]).toBe('users/1');
    worker.dispose();
    await released('for-a-person');
    expect(seen.failure).toBeNull();
  });

  it("revoking a connected worker's certificate cuts its connection, as it cuts a WebSocket", async () => {
    await store.subscriptions.create({ name: 'to-revoke', query: 'from Users' });
    const program = await fixture.stack.program('tcp-revoked', 'raven-worker');
    const programStore = await fixture.storeFor(program, 'office');
    const worker = programStore.subscriptions.getSubscriptionWorker<User>({ subscriptionName: 'to-revoke' });
    const seen = collect(worker);
    await seen.until(1);
    expect((await stateOf('to-revoke')).Connected).toBe(true);
    await fixture.stack.store.revokeCertificate(program.serial, Date.now());
    // The gateway's sweep finds the revocation and cuts the worker's connection: the tenant lets go.
    await released('to-revoke');
    worker.dispose();
  });
});
