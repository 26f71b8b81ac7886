// Creating or replacing an index: a JavaScript definition (a map, an optional reduce, in RavenDB's style)
// or a declarative one (JSON). The page checks only what it can say at once (a name, JSON that is an
// object with Maps); the tenant checks the rest (@rookery/protocol's IndexDefinitionSchema, and whether
// the JavaScript compiles) and its refusal is shown with its code and message. Importing the protocol's
// schema here would bring its Node-only modules into the browser's bundle.
import { useState } from 'react';
import { call, databasePath, describeError } from '../api.js';
import { type IndexDefinition, IndexPutSchema } from './schemas.js';

type Kind = 'javascript' | 'declarative';

/** What the editor starts from: an example, or the index's definition as the tenant answers it (draftOf). */
export interface Draft {
  name: string;
  kind: Kind;
  map: string;
  reduce: string;
  declarative: string;
}

export const NEW_DRAFT: Draft = {
  name: '',
  kind: 'javascript',
  map: "map('Users', u => ({ Name: u.Name, Age: u.Age }))",
  reduce: '',
  declarative: JSON.stringify({ Maps: [{ Collection: 'Users', Fields: { Name: 'Name' } }] }, null, 2),
};

/**
 * The draft of a stored definition: the JavaScript form when it holds all of it (one map and an optional
 * reduce, both JavaScript, nothing else), otherwise the JSON form with every field but the name, so saving
 * it unchanged puts back the same definition.
 */
export function draftOf(definition: IndexDefinition): Draft {
  const { Name, ...rest } = definition;
  const [map, ...more] = definition.Maps;
  const reduce = definition.Reduce;
  const onlyJavaScript =
    typeof map === 'string' &&
    more.length === 0 &&
    (reduce === undefined || typeof reduce === 'string') &&
    Object.keys(rest).every((key) => key === 'Maps' || key === 'Reduce');
  if (onlyJavaScript) return { ...NEW_DRAFT, name: Name, kind: 'javascript', map, reduce: reduce ?? '' };
  return { ...NEW_DRAFT, name: Name, kind: 'declarative', declarative: JSON.stringify(rest, null, 2) };
}

export function IndexEditor(props: {
  database: string;
  draft: Draft;
  /** Replacing an index: its name is fixed. */
  replacing: boolean;
  onSaved: (draft: Draft) => void;
  onCancel: () => void;
}) {
  const [draft, setDraft] = useState(props.draft);
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const checked = definitionOf(draft);

  async function save() {
    if (!checked.ok) return;
    setBusy(true);
    setFailure(null);
    try {
      await call('PUT', databasePath(props.database, 'indexes'), IndexPutSchema, {
        body: checked.definition,
      });
      props.onSaved(draft);
    } catch (error) {
      setFailure(describeError(error));
    } finally {
      setBusy(false);
    }
  }

  const edit = (change: Partial<Draft>) => setDraft((current) => ({ ...current, ...change }));
  return (
    <form
      className="index-editor"
      aria-labelledby="index-editor-heading"
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
    >
      <h2 id="index-editor-heading">{props.replacing ? `Replace ${draft.name}` : 'New index'}</h2>
      {props.replacing && (
        <p className="help">
          Saving replaces the definition, and the index is built again from the first document.
        </p>
      )}
      <label htmlFor="index-name">Name</label>
      <input
        id="index-name"
        value={draft.name}
        readOnly={props.replacing}
        onChange={(event) => edit({ name: event.target.value })}
      />
      <fieldset className="view">
        <legend>Definition</legend>
        <label>
          <input
            type="radio"
            name="index-kind"
            checked={draft.kind === 'javascript'}
            onChange={() => edit({ kind: 'javascript' })}
          />{' '}
          JavaScript
        </label>
        <label>
          <input
            type="radio"
            name="index-kind"
            checked={draft.kind === 'declarative'}
            onChange={() => edit({ kind: 'declarative' })}
          />{' '}
          Declarative (JSON)
        </label>
      </fieldset>
      {draft.kind === 'javascript' ? (
        <>
          <label htmlFor="index-map">Map (JavaScript)</label>
          <textarea
            id="index-map"
            rows={5}
            spellCheck={false}
            value={draft.map}
            onChange={(event) => edit({ map: event.target.value })}
          />
          <label htmlFor="index-reduce">Reduce (JavaScript, optional)</label>
          <textarea
            id="index-reduce"
            rows={3}
            spellCheck={false}
            value={draft.reduce}
            onChange={(event) => edit({ reduce: event.target.value })}
          />
        </>
      ) : (
        <>
          <label htmlFor="index-declarative">Maps, Reduce and Fields (JSON)</label>
          <textarea
            id="index-declarative"
            rows={10}
            spellCheck={false}
            value={draft.declarative}
            aria-invalid={!checked.ok}
            aria-describedby="index-validation"
            onChange={(event) => edit({ declarative: event.target.value })}
          />
        </>
      )}
      <p id="index-validation" className={checked.ok ? 'ok' : 'error'} aria-live="polite">
        {checked.ok ? 'The definition is well formed.' : checked.problem}
      </p>
      {failure && (
        <p role="alert" className="error">
          {failure}
        </p>
      )}
      <button type="submit" disabled={busy || !checked.ok}>
        Save index
      </button>
      <button type="button" onClick={props.onCancel}>
        Cancel
      </button>
    </form>
  );
}

type Checked = { ok: true; definition: unknown } | { ok: false; problem: string };

/** The definition the draft describes, checked against the tenant's own schema. */
function definitionOf(draft: Draft): Checked {
  let body: Record<string, unknown>;
  if (draft.kind === 'javascript') {
    body = { Maps: [draft.map] };
    if (draft.reduce.trim() !== '') body.Reduce = draft.reduce;
  } else {
    try {
      const parsed: unknown = JSON.parse(draft.declarative);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        return { ok: false, problem: 'The definition must be a JSON object with Maps (and Reduce, Fields).' };
      body = parsed as Record<string, unknown>;
    } catch (error) {
      return { ok: false, problem: `Not valid JSON: ${(error as Error).message}` };
    }
  }
  if (draft.name.trim() === '') return { ok: false, problem: 'Give the index a name, e.g. Users/ByName.' };
  if (draft.kind === 'javascript' && draft.map.trim() === '')
    return { ok: false, problem: "Write the map, e.g. map('Users', u => ({ Name: u.Name }))." };
  if (!Array.isArray(body.Maps) || body.Maps.length === 0)
    return { ok: false, problem: 'The definition needs Maps: a list of at least one map.' };
  return { ok: true, definition: { ...body, Name: draft.name } };
}
