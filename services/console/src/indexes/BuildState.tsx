// How far an index's build is, in words and a <progress> (never colour alone): its own progress, a
// worker's build of it, and a changed definition built side by side while this one answers
// (docs/mirror.md, "Worker-built indexes": the replacement is shown inside the index it replaces).
import type { BuildProgress, IndexStats, WorkerBuild } from './schemas.js';

/** The State column: "stale" alone would hide that the answering index is caught up and being replaced. */
export function stateText(index: IndexStats): string {
  if (!index.IsStale) return `${index.State} · up to date`;
  return `${index.State} · ${index.Replacement ? 'stale: being replaced' : 'stale'}`;
}

/**
 * Whether the page must read the index's stats again by itself: a worker's progress and a replacement's
 * adoption come from the host, not from indexing batches, so the changes feed does not always announce them.
 */
export function stillBuilding(index: IndexStats): boolean {
  const worker = index.Replacement ? index.Replacement.WorkerBuild : index.WorkerBuild;
  // A replacement the tenant builds itself moves with its batches, but its promotion is read here too.
  if (worker === undefined) return index.Replacement !== undefined;
  // A failed or cancelled build waits for a person (reset, or the definition saved again).
  return worker.State !== 'failed' && worker.State !== 'cancelled';
}

export function BuildState({ index }: { index: IndexStats }) {
  const { Replacement } = index;
  return (
    <>
      {Replacement === undefined ? (
        <Progress name={index.Name} progress={index.Progress} idle={index.IsStale ? 'waiting' : 'done'} />
      ) : (
        // Its own Progress is null while it is caught up: "waiting" would say it is behind.
        <Progress name={index.Name} progress={index.Progress} idle="caught up" />
      )}
      {index.WorkerBuild && <WorkerBuildLine build={index.WorkerBuild} />}
      {Replacement && (
        <div className="replacement" data-testid="replacement">
          <p>Replacing: the previous definition answers until the new one has caught up.</p>
          <p>
            {Replacement.Progress === null ? (
              'New definition: caught up, taking over'
            ) : (
              <Progress
                name={`${index.Name}'s new definition`}
                progress={Replacement.Progress}
                idle=""
                prefix="New definition: "
              />
            )}
          </p>
          {Replacement.WorkerBuild && <WorkerBuildLine build={Replacement.WorkerBuild} />}
        </div>
      )}
    </>
  );
}

function Progress({
  name,
  progress,
  idle,
  prefix = '',
}: {
  name: string;
  progress: BuildProgress;
  idle: string;
  prefix?: string;
}) {
  if (progress === null) return <span>{idle}</span>;
  const { TotalDocuments, DocumentsToProcess, IsEstimate } = progress;
  const done = TotalDocuments - DocumentsToProcess;
  const label = `${IsEstimate ? 'about ' : ''}${done} of ${TotalDocuments} documents`;
  return (
    <span>
      <progress value={done} max={Math.max(TotalDocuments, 1)} aria-label={`${name}: ${label}`} /> {prefix}
      {label}
    </span>
  );
}

function WorkerBuildLine({ build }: { build: WorkerBuild }) {
  return <p>Worker build: {workerText(build)}</p>;
}

function workerText({ State, Phase, DocumentsIndexed }: WorkerBuild): string {
  switch (State) {
    case 'requested':
      return 'requested, the host has not answered yet';
    case 'queued':
      return 'queued, waiting for a free worker';
    case 'active':
      if (Phase === 'restore') return 'active, restoring the database from the mirror';
      if (Phase === 'snapshot') return `active, writing the snapshot of ${DocumentsIndexed} documents`;
      return `active, ${DocumentsIndexed} documents indexed`;
    case 'completed':
      return 'completed, the tenant is taking it in';
    case 'failed':
      return 'failed: reset the index or save its definition again';
    case 'cancelled':
      return 'cancelled: a newer definition is built instead';
  }
}
