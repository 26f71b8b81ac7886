import fs from 'node:fs';
import path from 'node:path';
import { makeTempDir, spawnTs, waitForExit } from '@rookery/testkit';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { eventually, jobQueueContract, message } from './queue.contract.js';
import { jobQueueFile, openSqliteJobQueue } from './sqlite/open.js';
import { testLogger } from './test-fixtures/stores.js';
import type { WorkerProcessConfig } from './test-fixtures/worker-process.js';

const WORKER_PROCESS = path.join(import.meta.dirname, 'test-fixtures', 'worker-process.ts');
const TYPES = { task: { payload: z.json() } };

describe('SQLite job queue: the contract', () => {
  jobQueueContract(async () => {
    const { dir, cleanup } = makeTempDir('rookery-jobs-');
    return { store: { kind: 'sqlite', file: jobQueueFile(dir) }, cleanup: async () => cleanup() };
  });
});

describe('SQLite job queue: the file', () => {
  let dir: string;
  let cleanup: () => void;

  beforeEach(() => {
    ({ dir, cleanup } = makeTempDir('rookery-jobs-'));
  });
  afterEach(() => cleanup());

  it('lives at <data>/control/jobs.db, in WAL mode, and keeps its jobs across reopening', async () => {
    const file = jobQueueFile(dir);
    expect(file).toBe(path.join(dir, 'control', 'jobs.db'));
    const queue = await openSqliteJobQueue({ file, types: TYPES, logger: testLogger });
    const id = await queue.enqueue({ type: 'task', tenantId: 'acme', payload: { n: 1 } });
    await queue.close();

    const raw = new Database(file, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();

    const reopened = await openSqliteJobQueue({ file, types: TYPES, logger: testLogger });
    expect(await reopened.get(id)).toMatchObject({ id, state: 'queued', payload: { n: 1 } });
    await reopened.close();
  });

  it('several processes on one file run every job exactly once, never one job twice at a time', async () => {
    const file = jobQueueFile(dir);
    const logFile = path.join(dir, 'runs.log');
    const gateFile = path.join(dir, 'gate');
    fs.writeFileSync(logFile, '');
    const config: WorkerProcessConfig = {
      store: { kind: 'sqlite', file },
      type: 'task',
      behaviour: 'log',
      logFile,
      gateFile,
      concurrency: 3,
    };
    // Processes opening a new file together: the migration runs once.
    const children = Array.from({ length: 3 }, () => spawnTs(WORKER_PROCESS, [JSON.stringify(config)]));
    try {
      await Promise.all(children.map((child) => message(child, (m) => m['ready'] === true)));
      const queue = await openSqliteJobQueue({ file, types: TYPES, logger: testLogger });
      const ids: string[] = [];
      for (let n = 0; n < 60; n++) {
        ids.push(await queue.enqueue({ type: 'task', tenantId: `tenant-${n % 4}`, payload: { n } }));
      }
      // The work is shared: the first jobs wait at the gate until nine run at once, three per process, so
      // every process has claimed jobs (however fast one of them polls on a loaded machine).
      const starts = () =>
        fs
          .readFileSync(logFile, 'utf8')
          .split('\n')
          .filter((l) => l.startsWith('start '));
      await eventually(
        async () => starts(),
        (lines) => lines.length === 9,
      );
      expect(new Set(starts().map((line) => line.split(' ')[2])).size).toBe(3);
      fs.writeFileSync(gateFile, '');
      await eventually(
        () => queue.list({ state: 'completed', limit: 1000 }),
        (jobs) => jobs.length === ids.length,
      );
      for (const job of await queue.list({ limit: 1000 })) expect(job.attempts).toBe(1);
      await queue.close();

      const runs = new Map<string, string[]>();
      for (const line of fs.readFileSync(logFile, 'utf8').trim().split('\n')) {
        const [event, id, pid] = line.split(' ');
        runs.set(id!, [...(runs.get(id!) ?? []), `${event} ${pid}`]);
      }
      expect([...runs.keys()].sort()).toEqual([...ids].sort());
      for (const events of runs.values()) {
        expect(events).toHaveLength(2);
        const [start, end] = events;
        expect(start).toMatch(/^start /);
        expect(end).toBe(start!.replace('start', 'end'));
      }
    } finally {
      for (const child of children) child.kill('SIGKILL');
      await Promise.all(children.map((child) => waitForExit(child)));
    }
  });
});
