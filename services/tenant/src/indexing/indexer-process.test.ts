import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { RookeryError } from '@rookery/protocol';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { IndexerProcess, indexerEntry } from './indexer-process.js';
import { type FromIndexer, FromIndexerSchema } from './messages.js';

// The tenant↔indexer channel with the real indexer process: every request is answered or fails fast,
// whether the indexer refuses it, is stuck, or dies. A stuck indexer is a real one stopped with SIGSTOP.
const log = pino({ level: 'silent' });
const started: IndexerProcess[] = [];
const forked: ChildProcess[] = [];

afterEach(async () => {
  for (const child of forked.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  }
  for (const indexer of started.splice(0)) {
    // A stopped indexer cannot exit on its own; one the test killed is gone already.
    const pid = indexer.pid;
    try {
      if (pid !== undefined) process.kill(pid, 'SIGCONT');
    } catch {}
    await indexer.stop();
  }
});

async function startIndexer(options: { requestTimeoutMs?: number } = {}): Promise<IndexerProcess> {
  const indexer = new IndexerProcess(log, options);
  started.push(indexer);
  await indexer.whenReady();
  return indexer;
}

async function refusal(pending: Promise<unknown>): Promise<RookeryError> {
  const error = await pending.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof RookeryError)) throw new Error(`expected a RookeryError, got ${String(error)}`);
  return error;
}

/** The indexer's entry forked bare, to send it what IndexerProcess itself would never send. */
async function forkBare(): Promise<{ send(message: unknown): void; next(): Promise<FromIndexer> }> {
  const { entry, execArgv } = indexerEntry();
  const child = fork(entry, [], { execArgv, stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  forked.push(child);
  const received: FromIndexer[] = [];
  const waiters: ((m: FromIndexer) => void)[] = [];
  child.on('message', (raw) => {
    const message = FromIndexerSchema.parse(raw);
    const waiter = waiters.shift();
    if (waiter) waiter(message);
    else received.push(message);
  });
  const next = () => {
    const queued = received.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise<FromIndexer>((resolve) => waiters.push(resolve));
  };
  expect(await next()).toEqual({ type: 'ready' });
  return { send: (message) => child.send(message as object), next };
}

describe('the indexer channel', () => {
  it('answers a message it refuses with an error reply naming what is wrong, not silence', async () => {
    const indexer = await forkBare();
    indexer.send({
      type: 'put',
      id: 7,
      db: 'shop',
      definition: { Name: `Auto/${'x'.repeat(300)}`, Maps: [{ Collection: 'X', Fields: { A: 'A' } }] },
    });
    const reply = await indexer.next();
    expect(reply).toMatchObject({ type: 'reply', id: 7, ok: false, error: { code: 'InvalidRequest' } });
    expect(reply.type === 'reply' && reply.error?.message).toMatch(/at most 200 characters/);
    // It still answers what is well formed.
    indexer.send({ type: 'close', id: 8, db: 'shop' });
    expect(await indexer.next()).toMatchObject({ type: 'reply', id: 8, ok: true });
  });

  it("answers a request that fails inside the indexer without its internals (driver messages, paths): the tenant's log has them", async () => {
    const indexer = await startIndexer();
    const directory = '/nonexistent/rookery-data/tenants/acme/databases/shop';
    const error = await refusal(indexer.openDatabase('shop', directory));
    expect(error.code).toBe('InternalError');
    expect(error.message).not.toContain('/nonexistent');
    expect(error.message).toMatch(/tenant's log/);
  });

  it('refuses a request the indexer would refuse before sending it', async () => {
    const indexer = await startIndexer();
    const error = await refusal(
      indexer.request({
        type: 'put',
        db: 'shop',
        definition: { Name: `Auto/${'x'.repeat(300)}`, Maps: [{ Collection: 'X', Fields: { A: 'A' } }] },
      }),
    );
    expect(error.code).toBe('InvalidRequest');
    expect(error.message).toMatch(/at most 200 characters/);
    expect(await indexer.request({ type: 'close', db: 'shop' })).toBeNull();
  });

  it('fails a request the indexer does not answer within its deadline with a 503 naming the deadline', async () => {
    const indexer = await startIndexer({ requestTimeoutMs: 300 });
    process.kill(indexer.pid!, 'SIGSTOP');
    const error = await refusal(indexer.request({ type: 'close', db: 'shop' }));
    expect(error.code).toBe('DatabaseUnavailable');
    expect(error.status).toBe(503);
    expect(error.message).toMatch(/300 ms/);
    // Resumed, it answers again (its late reply to the request that timed out is dropped).
    process.kill(indexer.pid!, 'SIGCONT');
    expect(await indexer.request({ type: 'close', db: 'shop' })).toBeNull();
  });

  it('counts the deadline from when the indexer is ready, not while it still loads its code', async () => {
    // Loading the indexer's code can take longer than the deadline on a loaded machine (seconds, from
    // TypeScript sources): a request sent meanwhile (a tenant's first query) waits for it to load.
    // The deadline is long enough for the answer once the indexer is ready, even on a loaded machine (a
    // 200 ms one failed there: the answer itself took longer), and the stop below is twice as long.
    const indexer = new IndexerProcess(log, { requestTimeoutMs: 3_000 });
    started.push(indexer);
    process.kill(indexer.pid!, 'SIGSTOP'); // just forked: it has not loaded its code yet
    const pending = indexer.request({ type: 'close', db: 'shop' });
    await new Promise((resolve) => setTimeout(resolve, 6_000)); // the load outlasts the deadline
    process.kill(indexer.pid!, 'SIGCONT');
    expect(await pending).toBeNull();
  });

  it('fails every pending request at once when the indexer dies', async () => {
    const indexer = await startIndexer({ requestTimeoutMs: 10 * 60_000 });
    const pid = indexer.pid!;
    process.kill(pid, 'SIGSTOP');
    const pending = [1, 2, 3].map(() => refusal(indexer.request({ type: 'close', db: 'shop' })));
    process.kill(pid, 'SIGKILL');
    for (const error of await Promise.all(pending)) {
      expect(error.code).toBe('DatabaseUnavailable');
      expect(error.message).toMatch(/stopped/);
    }
  });
});
