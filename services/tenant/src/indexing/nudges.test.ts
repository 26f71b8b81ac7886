// The word the tenant sends its indexer after a commit: one covers every commit until the indexer says it
// is idle again, so a burst of writes costs one or two channel writes instead of one per commit, while a
// write after a quiet period is still announced at once. Real indexer process, real docs.db, real index.
import path from 'node:path';
import { Database } from '@rookery/engine';
import { makeTempDir } from '@rookery/testkit';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { buildTenantServer } from '../server.js';
import { httpClient } from '../test-fixtures/http-client.js';
import { IndexerProcess } from './indexer-process.js';

const log = pino({ level: 'silent' });
const INDEX = { Name: 'Users/ByName', Maps: [{ Collection: 'Users', Fields: { Name: 'Name' } }] };
let cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** A real database with one index, its commits nudging a real indexer process, as the tenant wires them. */
async function indexedDatabase() {
  const tmp = makeTempDir('rookery-tenant-nudges-');
  cleanups.push(() => tmp.cleanup());
  const db = Database.create(tmp.dir, 'shop');
  cleanups.push(() => db.close());
  const indexer = new IndexerProcess(log);
  cleanups.push(async () => {
    // A stopped indexer cannot exit: resume it before stopping it.
    try {
      if (indexer.pid !== undefined) process.kill(indexer.pid, 'SIGCONT');
    } catch {}
    await indexer.stop();
  });
  await indexer.openDatabase('shop', tmp.dir);
  await indexer.request({ type: 'put', db: 'shop', definition: INDEX });
  let indexed = 0;
  const waiters: Array<{ etag: number; resolve(): void }> = [];
  indexer.onProgress((_db, _index, lastEtag) => {
    indexed = Math.max(indexed, lastEtag);
    for (const waiter of waiters.filter((w) => w.etag <= indexed)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  });
  db.onCommit(() => indexer.nudge('shop'));
  let n = 0;
  const write = async () => {
    n++;
    await db.batch([
      { Type: 'PUT', Id: `users/${n}`, Document: { Name: `u${n}`, '@metadata': { '@collection': 'Users' } } },
    ]);
  };
  /** Resolves once the index holds every write so far (no deadline: the test's own timeout is the bound). */
  const caughtUp = () => {
    const etag = db.lastEtag;
    if (indexed >= etag) return Promise.resolve();
    return new Promise<void>((resolve) => waiters.push({ etag, resolve }));
  };
  /** Lets the turn that scheduled a nudge end, so that it has been written if it is going to be. */
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  return { db, indexer, write, caughtUp, turn };
}

describe('nudging the indexer', () => {
  it('sends one nudge for a burst of commits the indexer has not caught up with, and the burst ends indexed', async () => {
    const { indexer, write, caughtUp, turn } = await indexedDatabase();
    await write();
    await caughtUp();
    await indexer.settled('shop');
    const before = indexer.nudgesSent;
    // Stopped, the indexer cannot say it is idle: every commit of the burst after the first finds a nudge out.
    process.kill(indexer.pid!, 'SIGSTOP');
    for (let i = 0; i < 50; i++) {
      await write();
      await turn();
    }
    expect(indexer.nudgesSent - before).toBe(1);
    process.kill(indexer.pid!, 'SIGCONT');
    await caughtUp();
    // Its idle word after the burst is answered with one more nudge (commits may have landed after its last
    // look), which finds nothing new.
    await indexer.settled('shop');
    expect(indexer.nudgesSent - before).toBe(2);
  });

  it('announces a write after a quiet period at once', async () => {
    const { indexer, write, caughtUp, turn } = await indexedDatabase();
    await write();
    await caughtUp();
    await indexer.settled('shop');
    const before = indexer.nudgesSent;
    await write();
    await turn();
    expect(indexer.nudgesSent - before).toBe(1);
    await caughtUp();
  });
});

describe('nudging the indexer, through the tenant', () => {
  it('ends a burst of concurrent PUTs indexed, and indexes a PUT after the quiet that follows', async () => {
    const tmp = makeTempDir('rookery-tenant-nudges-http-');
    const server = buildTenantServer(
      loadConfig({}, { dataDir: path.join(tmp.dir, 'tenants', 'acme'), logLevel: 'silent' }),
    );
    cleanups.push(() => tmp.cleanup());
    cleanups.push(() => server.close());
    const base = await server.app.listen({ host: '127.0.0.1', port: 0 });
    const call = httpClient(() => base);
    expect((await call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
    expect((await call('PUT', '/databases/shop/indexes', INDEX)).status).toBe(201);
    const put = async (n: number) => {
      const body = { Name: `u${n}`, '@metadata': { '@collection': 'Users' } };
      expect((await call('PUT', `/databases/shop/docs?id=users/${n}`, body)).status).toBe(201);
    };
    /** The index's count of users, once it is caught up (the query waits for that; its wait is generous). */
    const indexedUsers = async () => {
      const answer = await call('POST', '/databases/shop/queries', {
        Query: `from index '${INDEX.Name}'`,
        WaitForNonStaleResults: true,
        WaitForNonStaleResultsTimeout: '00:05:00',
      });
      expect(answer.status).toBe(200);
      expect(answer.json.IsStale).toBe(false);
      return answer.json.TotalResults;
    };
    await Promise.all(Array.from({ length: 200 }, (_, n) => put(n)));
    expect(await indexedUsers()).toBe(200);
    await put(200);
    expect(await indexedUsers()).toBe(201);
  });
});
