// Documents: the database's collections with their counts (GET …/stats), a paged list of one collection
// (a collection query, which pages the collection without an index), and the editor (DocumentEditor.tsx).
import { useCallback, useEffect, useState } from 'react';
import { call, databasePath, QueryResultSchema, StatsSchema } from './api.js';
import { DocumentEditor, type Editing } from './DocumentEditor.js';

const PAGE_SIZE = 25;

export function Documents({ database, canWrite }: { database: string; canWrite: boolean }) {
  const [collections, setCollections] = useState<[string, number][]>([]);
  const [collection, setCollection] = useState<string | null>(null);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [error, setError] = useState('');
  const [version, setVersion] = useState(0);

  useEffect(() => {
    void version; // read again after every save, create or delete (`changed` below moves it)
    call('GET', databasePath(database, 'stats'), StatsSchema).then(
      ({ body }) => {
        const entries = Object.entries(body.Collections).sort(([a], [b]) => a.localeCompare(b));
        setCollections(entries);
        setCollection((current) => current ?? entries[0]?.[0] ?? null);
      },
      (failure: Error) => setError(failure.message),
    );
  }, [database, version]);

  // After a save, create or delete: counts and the list are read again.
  const changed = useCallback(() => setVersion((v) => v + 1), []);

  return (
    <div className="documents">
      <section aria-labelledby="collections-heading" className="collections">
        <h2 id="collections-heading">Collections</h2>
        {error && <p role="alert">{error}</p>}
        <ul>
          {collections.map(([name, count]) => (
            <li key={name}>
              <button
                type="button"
                aria-pressed={name === collection}
                onClick={() => {
                  setCollection(name);
                  setEditing(null);
                }}
              >
                {name} <span className="count">{count}</span>
              </button>
            </li>
          ))}
        </ul>
        {collections.length === 0 && !error && <p>No documents yet.</p>}
      </section>
      {collection !== null && (
        <DocumentList
          key={`${collection}:${version}`}
          database={database}
          collection={collection}
          onOpen={(id) => setEditing({ kind: 'existing', id })}
          onNew={canWrite ? () => setEditing({ kind: 'new', collection }) : null}
        />
      )}
      {editing !== null && (
        <DocumentEditor
          key={editing.kind === 'existing' ? editing.id : `new:${editing.collection}`}
          database={database}
          editing={editing}
          canWrite={canWrite}
          onSaved={(id) => {
            setEditing({ kind: 'existing', id, notice: `Saved ${id}.` });
            changed();
          }}
          onDeleted={() => {
            setEditing(null);
            changed();
          }}
        />
      )}
    </div>
  );
}

function DocumentList(props: {
  database: string;
  collection: string;
  onOpen: (id: string) => void;
  /** Null for a principal that may only read the database. */
  onNew: (() => void) | null;
}) {
  const { database, collection } = props;
  const [page, setPage] = useState(0);
  const [ids, setIds] = useState<string[]>([]);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState('');

  useEffect(() => {
    const query = `from ${quoteName(collection)} limit ${PAGE_SIZE} offset ${page * PAGE_SIZE}`;
    call('POST', databasePath(database, 'queries'), QueryResultSchema, { body: { Query: query } }).then(
      ({ body }) => {
        setTotal(body.TotalResults);
        setIds(body.Results.map(idOf).filter((id): id is string => id !== null));
      },
      (failure: Error) => setError(failure.message),
    );
  }, [database, collection, page]);

  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  return (
    <section aria-labelledby="list-heading" className="list">
      <h2 id="list-heading">{collection}</h2>
      {props.onNew && (
        <button type="button" onClick={props.onNew}>
          New document
        </button>
      )}
      {error && <p role="alert">{error}</p>}
      <ul aria-label={`Documents in ${collection}`}>
        {ids.map((id) => (
          <li key={id}>
            <button type="button" className="link" onClick={() => props.onOpen(id)}>
              {id}
            </button>
          </li>
        ))}
      </ul>
      <nav aria-label="Pages of the list" className="pager">
        <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
          Previous
        </button>
        <span>
          Page {page + 1} of {pages} ({total} documents)
        </span>
        <button type="button" disabled={page + 1 >= pages} onClick={() => setPage(page + 1)}>
          Next
        </button>
      </nav>
    </section>
  );
}

function idOf(result: unknown): string | null {
  if (typeof result !== 'object' || result === null) return null;
  const metadata = (result as { '@metadata'?: { '@id'?: unknown } })['@metadata'];
  return typeof metadata?.['@id'] === 'string' ? metadata['@id'] : null;
}

/** A collection name as RQL reads it: quoted, with its quotes doubled. */
function quoteName(name: string): string {
  return `'${name.replaceAll("'", "''")}'`;
}
