// Worker-built indexes as the tenant sees them (docs/mirror.md, "Worker-built indexes"). The indexer asks
// for a build; the tenant has no job queue, so it passes the request to its host (over IPC, the one channel
// it has), which enqueues the `index-build` job and sends back the job's progress while it runs. What the
// host last said is kept here per index, so that the index's stats can say how far the worker is, until the
// indexer reports the build adopted.
import type {
  IndexBuildProgressMessage,
  IndexBuildRequestMessage,
  IndexStats,
  WorkerBuildStats,
} from '@rookery/protocol';
import type { FastifyBaseLogger } from 'fastify';
import type { WorkerBuildEvent } from './indexer-process.js';

/** Where a build request goes: the host (process.send), or nowhere for a tenant without one. */
export type IndexBuildSink = (request: IndexBuildRequestMessage) => void;

interface Awaited {
  build: string;
  progress: WorkerBuildStats;
}

export class WorkerBuilds {
  /** By `<db>/<index>`, both in lower case. */
  private readonly awaited = new Map<string, Awaited>();

  /** `landed`: told the database whose awaited build the host reports completed (the indexer adopts it). */
  constructor(
    private readonly sink: IndexBuildSink | null,
    private readonly log: FastifyBaseLogger,
    private readonly landed: (db: string) => void = () => undefined,
  ) {}

  /** From the indexer: a build asked for, or one adopted. */
  onIndexer(event: WorkerBuildEvent): void {
    if (event.type === 'adopted') {
      this.awaited.delete(keyOf(event.db, event.index));
      return;
    }
    const key = keyOf(event.db, event.definition.Name);
    this.awaited.set(key, {
      build: event.build,
      progress: { State: 'requested', Phase: null, DocumentsIndexed: 0 },
    });
    if (!this.sink) {
      // ROOKERY_INDEX_WORKER_THRESHOLD set on a tenant that no host supervises: nobody can enqueue.
      this.log.error(
        { db: event.db, index: event.definition.Name },
        'an index awaits a worker build but this tenant has no host to enqueue it; unset ROOKERY_INDEX_WORKER_THRESHOLD',
      );
      return;
    }
    this.sink({ type: 'index-build', database: event.db, definition: event.definition, build: event.build });
  }

  /** From the host: the job's state and progress (a report about another build of the index is old news). */
  onHost(message: IndexBuildProgressMessage): void {
    const awaited = this.awaited.get(keyOf(message.database, message.index));
    if (!awaited || awaited.build !== message.build) return;
    awaited.progress = { State: message.state, Phase: message.phase, DocumentsIndexed: message.documents };
    if (message.state === 'completed') this.landed(message.database);
  }

  /**
   * The index's stats with the worker's build: `WorkerBuild` while one is awaited, and for an index the
   * worker builds from zero (nothing indexed here), the documents still to process less what it indexed.
   * `build` is the label in the index file (`awaitedBuildOf`): the build awaited under the index's name may
   * be its replacement's, or one called off (the answering definition put back), and is not this file's then.
   */
  statsWith(db: string, stats: IndexStats, build: string | null): IndexStats {
    const awaited = this.awaited.get(keyOf(db, stats.Name));
    if (!awaited || build === null || awaited.build !== build) return stats;
    const { Progress } = stats;
    const fromZero = stats.LastIndexedEtag === 0 && Progress !== null;
    return {
      ...stats,
      WorkerBuild: awaited.progress,
      Progress: fromZero
        ? {
            ...Progress,
            DocumentsToProcess: Math.max(0, Progress.DocumentsToProcess - awaited.progress.DocumentsIndexed),
          }
        : Progress,
    };
  }
}

function keyOf(db: string, index: string): string {
  return `${db.toLowerCase()}/${index.toLowerCase()}`;
}
