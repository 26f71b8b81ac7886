// The word the tenant sends its indexer after a commit: one covers every commit until the indexer says it
// is idle again, so a burst of writes costs one or two channel writes instead of one per commit, while a
// write after a quiet period is still announced at once. Real indexer process, real docs.db, real index.
import { Database } from '@rookery/engine';
import { makeTempDir } from '@rookery/testkit';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
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
