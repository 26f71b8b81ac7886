// The index-build job (issue [10]): one index of one database, built on the worker from the mirror
// (never from the host's disk) and written back to the mirror as an index snapshot labelled with the
// build the tenant's indexer asked for; the indexer adopts it (engine: mirror/index-build.ts,
// indexing/index-adoption.ts). Failures throw, so the queue retries the job while attempts remain;
// an attempt that died leaves its scratch directory (cleared by the retry) and at most an unfinished
// dot-directory on the mirror, which is never adopted and is pruned.
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildIndexOnMirror } from '@rookery/engine';
import type { JobHandler } from '@rookery/jobs';
import type { IndexBuildJobPayload } from '@rookery/protocol';
import type { WorkerMetrics } from '../metrics.js';
import { JobReporter } from './job-reporter.js';
import { tenantDirectoryName } from './tenant-paths.js';

export interface IndexBuildJobDependencies {
  /** The mirror's root: a database is at `<mirror>/<tenant>/<database in lower case>`. */
  mirrorDir: string;
  scratchDir: string;
  metrics: WorkerMetrics;
  /** Cap on documents indexed per second by one build (0: none): keeps a worker's disk and cores for its other jobs. */
  maxDocumentsPerSecond: number;
  batchSize: number;
}

export function indexBuildJobHandler(deps: IndexBuildJobDependencies): JobHandler<IndexBuildJobPayload> {
  return async (job, context) => {
    const { database, definition, build } = job.payload;
    const log = context.log.child({ db: database, index: definition.Name });
    const tenant = tenantDirectoryName(job.tenantId);
    const reporter = new JobReporter(job, database, context, log, deps.metrics, null);
    // The rate paces the indexing from its first batch, not from the job's start: a restore that took long
    // must not leave budget that lets the build then run unpaced.
    let pacedFrom: number | undefined;
    log.info({ build }, 'index build started');
    try {
      const outcome = await buildIndexOnMirror({
        mirrorDirectory: path.join(deps.mirrorDir, tenant, database.toLowerCase()),
        scratchDirectory: path.join(deps.scratchDir, tenant),
        definition,
        build,
        batchSize: deps.batchSize,
        signal: context.signal,
        onProgress: async (progress) => {
          // What a query on the index shows while it is stale: documents indexed so far and the target.
          reporter.update({
            phase: progress.phase,
            bytesRead: 0,
            bytesToRead: 0,
            documents: progress.documents,
            lastEtag: progress.lastEtag,
            targetEtag: progress.targetEtag,
          });
          if (deps.maxDocumentsPerSecond > 0) {
            pacedFrom ??= performance.now();
            const due =
              (progress.documents / deps.maxDocumentsPerSecond) * 1000 - (performance.now() - pacedFrom);
            if (due > 0) await sleep(due, undefined, { signal: context.signal });
          }
        },
      });
      const summary = {
        index: definition.Name,
        build,
        generation: outcome.generation,
        etag: outcome.snapshot.etag,
        txid: outcome.snapshot.txid,
        documents: outcome.documents,
        bytes: outcome.snapshot.bytes,
      };
      await reporter.finish('completed', summary);
      log.info(summary, 'index build completed');
    } catch (error) {
      await reporter.finish('failed', {});
      log.error({ err: error }, 'index build failed; the queue retries it');
      throw error;
    }
  };
}
