// Indexes: every index of the database with its state, staleness, build progress and errors, kept current
// by the changes feed (each IndexChange reloads that index's stats, so progress moves as batches
// complete) and, while a worker builds an index or a changed definition is built beside it, by reading
// its stats every READ_AGAIN_MS (what the host says of a worker's build reaches no feed); create and replace definitions (IndexEditor; Replace starts from the definition the tenant
// answers, whoever made the index), reset and delete after a confirmation. A
// principal that may only read the database sees no change buttons (the gateway refuses them anyway).
import { useCallback, useEffect, useState } from 'react';
import { call, databasePath, describeError, NothingSchema } from '../api.js';
import { type FeedState, type IndexChange, useIndexChanges } from '../changes.js';
import { BuildState, stateText, stillBuilding } from './BuildState.js';
import { type Draft, draftOf, IndexEditor, NEW_DRAFT } from './IndexEditor.js';
import {
  IndexDefinitionSchema,
  IndexListSchema,
  IndexResetSchema,
  type IndexStats,
  IndexStatsSchema,
} from './schemas.js';

/** How often the stats of an index a worker builds, or one being replaced, are read again. */
const READ_AGAIN_MS = 2_000;

type Editing = { draft: Draft; replacing: boolean } | null;
type Confirming = { action: 'reset' | 'delete'; name: string } | null;

export function Indexes({ database, canWrite }: { database: string; canWrite: boolean }) {
  const [indexes, setIndexes] = useState<IndexStats[] | null>(null);
  const [feed, setFeed] = useState<FeedState>('connecting');
  const [editing, setEditing] = useState<Editing>(null);
  const [confirming, setConfirming] = useState<Confirming>(null);
  const [notice, setNotice] = useState('');
  const [failure, setFailure] = useState('');

  const reload = useCallback(async () => {
    try {
      const { body } = await call('GET', databasePath(database, 'indexes'), IndexListSchema);
      setIndexes(body.Results);
    } catch (error) {
      setFailure(describeError(error));
    }
  }, [database]);

  const reloadOne = useCallback(
    (name: string) => {
      const path = databasePath(database, `indexes/stats?name=${encodeURIComponent(name)}`);
      return call('GET', path, IndexStatsSchema).then(
        ({ body }) => setIndexes((list) => list?.map((i) => (same(i.Name, body.Name) ? body : i)) ?? null),
        // Deleted meanwhile: its IndexRemoved reloads the list.
        () => undefined,
      );
    },
    [database],
  );

  const onChange = useCallback(
    (change: IndexChange) => {
      if (change.Type === 'BatchCompleted') void reloadOne(change.Name);
      else void reload();
    },
    [reload, reloadOne],
  );
  useIndexChanges(database, onChange, setFeed);

  // Each answer sets the list, which schedules the next read while something still builds.
  useEffect(() => {
    const building = indexes?.filter(stillBuilding).map((index) => index.Name) ?? [];
    if (building.length === 0) return;
    const timer = setTimeout(() => {
      for (const name of building) void reloadOne(name);
    }, READ_AGAIN_MS);
    return () => clearTimeout(timer);
  }, [indexes, reloadOne]);

  // Loaded once the watch is confirmed, so no batch completes unseen between the list and the watch (and
  // loaded all the same if the feed could not open).
  useEffect(() => {
    if (feed !== 'connecting') void reload();
  }, [feed, reload]);

  /** Replace starts from the index's definition as the tenant has it (also one made with curl or an SDK). */
  async function replace(name: string) {
    setFailure('');
    try {
      const path = databasePath(database, `indexes/definition?name=${encodeURIComponent(name)}`);
      const { body } = await call('GET', path, IndexDefinitionSchema);
      setEditing({ draft: draftOf(body), replacing: true });
    } catch (error) {
      setFailure(describeError(error));
    }
  }

  async function confirmed(action: 'reset' | 'delete', name: string) {
    setFailure('');
    try {
      const query = `?name=${encodeURIComponent(name)}`;
      if (action === 'delete') {
        await call('DELETE', databasePath(database, `indexes${query}`), NothingSchema);
        setNotice(`Deleted ${name}.`);
      } else {
        await call('POST', databasePath(database, `indexes/reset${query}`), IndexResetSchema);
        setNotice(`Reset ${name}: it is built again from the first document.`);
      }
      await reload();
    } catch (error) {
      setFailure(describeError(error));
    } finally {
      setConfirming(null);
    }
  }

  return (
    <div className="indexes">
      <h1>Indexes</h1>
      <p className="status" data-testid="feed-state">
        {feed === 'live'
          ? 'Live: progress updates as the indexer works.'
          : feed === 'connecting'
            ? 'Connecting to the changes feed…'
            : 'The changes feed closed: reload the page to follow progress again.'}
      </p>
      {failure && (
        <p role="alert" className="error">
          {failure}
        </p>
      )}
      {notice && <p className="ok">{notice}</p>}
      {canWrite && editing === null && (
        <button type="button" onClick={() => setEditing({ draft: NEW_DRAFT, replacing: false })}>
          New index
        </button>
      )}
      {editing && (
        <IndexEditor
          key={editing.draft.name}
          database={database}
          draft={editing.draft}
          replacing={editing.replacing}
          onCancel={() => setEditing(null)}
          onSaved={(draft: Draft) => {
            setNotice(`Saved ${draft.name}.`);
            setEditing(null);
            void reload();
          }}
        />
      )}
      {indexes === null ? (
        <p>Loading…</p>
      ) : indexes.length === 0 ? (
        <p>No index yet. Queries create automatic ones; static ones are made here.</p>
      ) : (
        <div className="table-scroll">
          <table>
            <caption>Indexes of {database}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">State</th>
                <th scope="col">Progress</th>
                <th scope="col">Entries</th>
                <th scope="col">Errors</th>
                {canWrite && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {indexes.map((index) => (
                <tr key={index.Name} data-index={index.Name}>
                  <th scope="row">{index.Name}</th>
                  <td>{index.Type}</td>
                  <td>{stateText(index)}</td>
                  <td>
                    <BuildState index={index} />
                  </td>
                  <td data-testid="entries">{index.EntriesCount}</td>
                  <td>
                    <Errors index={index} />
                  </td>
                  {canWrite && (
                    <td>
                      {confirming?.name === index.Name ? (
                        <>
                          <button
                            type="button"
                            className="danger"
                            onClick={() => void confirmed(confirming.action, index.Name)}
                          >
                            {confirming.action === 'delete' ? 'Delete' : 'Reset'} {index.Name} for good
                          </button>
                          <button type="button" onClick={() => setConfirming(null)}>
                            Cancel
                          </button>
                        </>
                      ) : (
                        <>
                          {!index.Name.toLowerCase().startsWith('auto/') && (
                            <button
                              type="button"
                              aria-label={`Replace ${index.Name}`}
                              onClick={() => void replace(index.Name)}
                            >
                              Replace
                            </button>
                          )}
                          <button
                            type="button"
                            aria-label={`Reset ${index.Name}`}
                            onClick={() => setConfirming({ action: 'reset', name: index.Name })}
                          >
                            Reset
                          </button>
                          <button
                            type="button"
                            aria-label={`Delete ${index.Name}`}
                            onClick={() => setConfirming({ action: 'delete', name: index.Name })}
                          >
                            Delete
                          </button>
                        </>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function Errors({ index }: { index: IndexStats }) {
  if (index.ErrorsCount === 0) return <span>0</span>;
  return (
    <details>
      <summary>{index.ErrorsCount}</summary>
      <ul>
        {index.Errors.map((error) => (
          <li key={`${error.At}-${error.Document}`}>
            {error.Document ?? '(the index)'}: {error.Error} <small>{error.At}</small>
          </li>
        ))}
      </ul>
    </details>
  );
}

function same(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
