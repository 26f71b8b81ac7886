// One document: its JSON in an editor that validates as one types, its metadata apart (read-only here), and
// save with optimistic concurrency: the PUT carries the change vector the document was read at (If-Match),
// so a change someone else made meanwhile is a 409 ConcurrencyConflict, and the editor then shows both
// versions and lets the person choose. A new document gets its id from the server (`users/` → users/17-A).
import { useEffect, useState } from 'react';
import {
  ApiError,
  call,
  DocumentSchema,
  databasePath,
  LoadedSchema,
  NothingSchema,
  PutSchema,
  splitMetadata,
} from './api.js';

/** What the editor holds: a stored document (with what to tell about it, e.g. that it was just created), or a new one. */
export type Editing = { kind: 'existing'; id: string; notice?: string } | { kind: 'new'; collection: string };

interface Loaded {
  body: Record<string, unknown>;
  metadata: Record<string, unknown>;
  changeVector: string | null;
}

/** Metadata the server sets itself; what the editor sends back is the rest (`@collection`, `@expires`, …). */
const SERVER_OWNED = new Set(['@id', '@change-vector', '@last-modified', '@etag', '@flags']);

export function DocumentEditor(props: {
  database: string;
  editing: Editing;
  /** False for a principal that may only read the database: no Save or Delete (the gateway refuses them). */
  canWrite: boolean;
  onSaved: (id: string) => void;
  onDeleted: () => void;
}) {
  const { database, editing } = props;
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [text, setText] = useState('{\n  \n}');
  const [status, setStatus] = useState(editing.kind === 'existing' ? (editing.notice ?? '') : '');
  const [error, setError] = useState('');
  const [conflict, setConflict] = useState<Loaded | null>(null);
  const [confirmingDelete, setConfirmingDelete] = useState(false);
  const id = editing.kind === 'existing' ? editing.id : null;

  useEffect(() => {
    if (id === null) return;
    load(database, id).then(
      (document) => {
        setLoaded(document);
        setText(JSON.stringify(document.body, null, 2));
      },
      (failure: Error) => setError(failure.message),
    );
  }, [database, id]);

  const validation = validate(text);

  async function save() {
    if (validation.value === null) return;
    setStatus('');
    setError('');
    const metadata = Object.fromEntries(
      Object.entries(loaded?.metadata ?? {}).filter(([key]) => !SERVER_OWNED.has(key)),
    );
    if (editing.kind === 'new') metadata['@collection'] = editing.collection;
    const target = id ?? `${editing.kind === 'new' ? editing.collection.toLowerCase() : ''}/`;
    const headers: Record<string, string> = loaded?.changeVector
      ? { 'if-match': `"${loaded.changeVector}"` }
      : {};
    try {
      const { body } = await call(
        'PUT',
        databasePath(database, `docs?id=${encodeURIComponent(target)}`),
        PutSchema,
        {
          body: { ...validation.value, '@metadata': metadata },
          headers,
        },
      );
      setConflict(null);
      setStatus(`Saved ${body.Id}.`);
      if (id === body.Id) setLoaded(await load(database, body.Id));
      props.onSaved(body.Id);
    } catch (failure) {
      if (failure instanceof ApiError && failure.code === 'ConcurrencyConflict' && id !== null) {
        setConflict(await load(database, id));
        return;
      }
      setError(failure instanceof Error ? failure.message : String(failure));
    }
  }

  async function remove() {
    if (id === null) return;
    const headers: Record<string, string> = loaded?.changeVector
      ? { 'if-match': `"${loaded.changeVector}"` }
      : {};
    try {
      await call('DELETE', databasePath(database, `docs?id=${encodeURIComponent(id)}`), NothingSchema, {
        headers,
      });
      props.onDeleted();
    } catch (failure) {
      setConfirmingDelete(false);
      setError(failure instanceof Error ? failure.message : String(failure));
    }
  }

  /** Keeps the person's text and saves it over the server's version next time (its change vector now). */
  function keepMine() {
    if (conflict === null) return;
    setLoaded(conflict);
    setConflict(null);
    setStatus('Your version is kept; Save writes it over the newer one.');
  }

  function takeTheirs() {
    if (conflict === null) return;
    setLoaded(conflict);
    setText(JSON.stringify(conflict.body, null, 2));
    setConflict(null);
    setStatus('The newer version from the server is loaded.');
  }

  const title = id ?? `New document in ${editing.kind === 'new' ? editing.collection : ''}`;
  return (
    <section aria-labelledby="editor-heading" className="editor">
      <h2 id="editor-heading">{title}</h2>
      <label htmlFor="document-json">Document (JSON)</label>
      <textarea
        id="document-json"
        spellCheck={false}
        rows={16}
        value={text}
        readOnly={!props.canWrite}
        aria-invalid={validation.error !== null}
        aria-describedby="document-validation"
        onChange={(event) => setText(event.target.value)}
      />
      <p id="document-validation" className={validation.error ? 'error' : 'ok'} aria-live="polite">
        {validation.error ?? 'Valid JSON.'}
      </p>
      {!props.canWrite && <p className="help">This certificate may only read database {database}.</p>}
      <div className="actions" hidden={!props.canWrite}>
        <button type="button" onClick={() => void save()} disabled={validation.value === null}>
          Save
        </button>
        {id !== null &&
          (confirmingDelete ? (
            <>
              <button type="button" className="danger" onClick={() => void remove()}>
                Delete {id} for good
              </button>
              <button type="button" onClick={() => setConfirmingDelete(false)}>
                Keep it
              </button>
            </>
          ) : (
            <button type="button" onClick={() => setConfirmingDelete(true)}>
              Delete
            </button>
          ))}
      </div>
      {status && <output className="status">{status}</output>}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {conflict && (
        <section role="alert" aria-labelledby="conflict-heading" className="conflict">
          <h3 id="conflict-heading">Someone else changed this document since you opened it</h3>
          <div className="versions">
            <figure>
              <figcaption>Your version</figcaption>
              <pre>{validation.value ? JSON.stringify(validation.value, null, 2) : text}</pre>
            </figure>
            <figure>
              <figcaption>On the server now</figcaption>
              <pre>{JSON.stringify(conflict.body, null, 2)}</pre>
            </figure>
          </div>
          <button type="button" onClick={keepMine}>
            Keep mine
          </button>
          <button type="button" onClick={takeTheirs}>
            Take the server's
          </button>
        </section>
      )}
      {loaded && (
        <section aria-labelledby="metadata-heading" className="metadata">
          <h3 id="metadata-heading">Metadata</h3>
          <dl>
            {Object.entries(loaded.metadata).map(([key, value]) => (
              <div key={key}>
                <dt>{key}</dt>
                <dd>{typeof value === 'string' ? value : JSON.stringify(value)}</dd>
              </div>
            ))}
          </dl>
        </section>
      )}
    </section>
  );
}

async function load(database: string, id: string): Promise<Loaded> {
  const { body } = await call(
    'GET',
    databasePath(database, `docs?id=${encodeURIComponent(id)}`),
    LoadedSchema,
  );
  const document = DocumentSchema.parse(body.Results[0]);
  const { body: fields, metadata } = splitMetadata(document);
  const changeVector = typeof metadata['@change-vector'] === 'string' ? metadata['@change-vector'] : null;
  return { body: fields, metadata, changeVector };
}

function validate(text: string): { value: Record<string, unknown> | null; error: string | null } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { value: null, error: `Not valid JSON: ${(error as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { value: null, error: 'A document is a JSON object: { "Name": "…" }.' };
  }
  if ('@metadata' in value) return { value: null, error: 'Metadata is kept apart: remove "@metadata" here.' };
  return { value: value as Record<string, unknown>, error: null };
}
