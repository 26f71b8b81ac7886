// The index-build job run by the worker as a process of its own (src/main.ts), SIGKILLed in the
// middle of a build: nothing reaches the mirror that the indexer could adopt, the queue retries the
// job once its lease has run out, and the retry's snapshot is adopted and caught up.
import fs from 'node:fs';
import path from 'node:path';
import { type Database, DatabaseIndexer, listIndexSnapshots } from '@rookery/engine';
import { type JobQueue, jobQueueFile, openSqliteJobQueue } from '@rookery/jobs';
import { type IndexDefinition, indexBuildDedupeKey, type RookeryJobTypes } from '@rookery/protocol';
import { makeTempDir, waitForExit } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { finished, SHORT_LEASE_JOB_TYPES, waitForJob } from '../test-fixtures/jobs.js';
import {
  createMirroredDatabase,
  DATABASE,
  mirrorDirectoryOf,
  prepareDatabase,
  TENANT,
} from '../test-fixtures/mirrored-database.js';
import { type WorkerProcesses, workerProcesses } from '../test-fixtures/worker-process.js';

const BY_WORD: IndexDefinition = {
  Name: 'Notes/ByWord',
  Maps: [{ Collection: 'Notes', Fields: { Word: 'Word', N: 'N' } }],
};
const NOTES = 2_000;

let tmp: ReturnType<typeof makeTempDir>;
let dataDir: string;
let source: Database;
let queue: JobQueue<RookeryJobTypes>;
let workers: WorkerProcesses;

beforeEach(async () => {
  tmp = makeTempDir('rookery-index-build-job-');
  dataDir = path.join(tmp.dir, 'data');
  workers = workerProcesses(dataDir);
  source = createMirroredDatabase(path.join(tmp.dir, 'local'), path.join(dataDir, 'mirror'));
  await prepareDatabase(source);
  await source.batch(
    Array.from({ length: NOTES }, (_, i) => ({
      Type: 'PUT' as const,
      Id: `notes/${i}`,
      Document: { Word: `w${i % 37}`, N: i, '@metadata': { '@collection': 'Notes' } },
    })),
  );
  await source.putIndexDefinition(BY_WORD);
  await source.mirror!.flushed();
  queue = await openSqliteJobQueue({ file: jobQueueFile(dataDir), types: SHORT_LEASE_JOB_TYPES });
});

afterEach(async () => {
  await workers.stopAll();
  await queue.close();
  await source.close();
  tmp.cleanup();
});

/** Every worker here builds in small batches, so a kill lands mid-build. */
const startWorkerProcess = (env: Record<string, string>) =>
  workers.start({ ROOKERY_INDEX_BUILD_BATCH: '100', ...env });

describe('a worker process killed mid-build', () => {
  it('leaves nothing adopted; the retry builds the index and the indexer adopts and catches it up', async () => {
    const mirror = mirrorDirectoryOf(path.join(dataDir, 'mirror'));
    const asked: string[] = [];
    const indexer = new DatabaseIndexer(path.join(tmp.dir, 'local', DATABASE), {
      workerBuilds: {
        mirrorDirectory: mirror,
        threshold: 100,
        request: (definition, build) => {
          asked.push(build);
          void queue.enqueue({
            type: 'index-build',
            tenantId: TENANT,
            payload: { database: DATABASE, definition, build },
            maxAttempts: 3,
            backoffMs: 0,
            dedupeKey: indexBuildDedupeKey(TENANT, DATABASE, definition.Name),
          });
        },
      },
    });
    try {
      indexer.put(BY_WORD);
      expect(asked).toHaveLength(1);
      const [job] = await queue.list({ type: 'index-build' });
      const id = job!.id;

      // At 400 documents/s, the first worker is still building when it is killed.
      const first = await startWorkerProcess({ ROOKERY_INDEX_BUILD_MAX_DOCS_PER_S: '400' });
      const busy = await waitForJob(
        queue,
        id,
        (j) => j.state === 'active' && j.progress?.phase === 'index' && Number(j.progress?.documents) > 0,
        'active, indexing',
      );
      expect(Number(busy.progress!.documents)).toBeLessThan(NOTES);
      first.kill('SIGKILL');
      expect(await waitForExit(first)).toMatchObject({ signal: 'SIGKILL' });

      const generations = fs.readdirSync(path.join(mirror, 'generations'));
      const complete = generations.flatMap((g) => listIndexSnapshots(path.join(mirror, 'generations', g)));
      expect(complete).toEqual([]);
      expect(indexer.adoptBuilt()).toEqual([]);
      expect(indexer.stats(BY_WORD.Name)).toMatchObject({ LastIndexedEtag: 0, IsStale: true });

      // Written while no worker builds: the adopted index must catch up with these too.
      await source.batch([
        {
          Type: 'PUT',
          Id: 'notes/new',
          Document: { Word: 'late', N: -1, '@metadata': { '@collection': 'Notes' } },
        },
        { Type: 'DELETE', Id: 'notes/0' },
      ]);
      await source.mirror!.flushed();

      const second = await startWorkerProcess({});
      const done = await waitForJob(queue, id, finished, 'finished');
      expect(done).toMatchObject({ state: 'completed', progress: { outcome: 'completed' } });
      // The first attempt's lease ran out (a slow machine may let the retry's lease run out too).
      expect(done.attempts).toBeGreaterThanOrEqual(2);
      expect(done.lastError).toBeTruthy();

      expect(indexer.adoptBuilt()).toEqual([BY_WORD.Name]);
      indexer.runUntilIdle();
      expect(indexer.stats(BY_WORD.Name)).toMatchObject({ IsStale: false, EntriesCount: NOTES });

      second.kill('SIGTERM');
      expect(await waitForExit(second)).toEqual({ code: 0, signal: null });
    } finally {
      indexer.close();
    }
  });
});
