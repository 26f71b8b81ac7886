// Query: an RQL editor with parameters, the parser's positioned error shown at its line and column, and the
// results as a table or as JSON with TotalResults, IsStale and the index that answered; facets,
// suggestions, timings and the plan as such, and the export of every result (query/Extras.tsx).
import { type KeyboardEvent, useState } from 'react';
import { ApiError, call, databasePath, type QueryResult, QueryResultSchema } from './api.js';
import { ExportResults } from './query/ExportResults.js';
import { PlanSchema, PlanTree, specialResultsOf, TimingsChart } from './query/Extras.js';
import { RqlEditor } from './query/RqlEditor.js';

interface QueryError {
  message: string;
  code: string;
  position: { line: number; column: number } | null;
}

export function Query({ database }: { database: string }) {
  const [text, setText] = useState('from @all_docs');
  const [parameters, setParameters] = useState('{}');
  const [result, setResult] = useState<QueryResult | null>(null);
  // The query and parameters that gave `result` (the editor may have changed since): what Export streams.
  const [ran, setRan] = useState<{ text: string; parameters: Record<string, unknown> } | null>(null);
  const [error, setError] = useState<QueryError | null>(null);
  const [view, setView] = useState<'table' | 'json'>('table');
  const [busy, setBusy] = useState(false);
  const [waitForIndex, setWaitForIndex] = useState(false);

  const parsedParameters = parseParameters(parameters);
  const planParsed = result?.Plan === undefined ? null : PlanSchema.safeParse(result.Plan);
  const plan = planParsed?.success ? planParsed.data : null;
  const special = ran && result ? specialResultsOf(ran.text, result.Results) : null;

  async function run() {
    const query = text;
    if (parsedParameters.error !== null) return;
    setBusy(true);
    setError(null);
    try {
      const { body } = await call('POST', databasePath(database, 'queries'), QueryResultSchema, {
        body: { Query: query, QueryParameters: parsedParameters.value, WaitForNonStaleResults: waitForIndex },
      });
      setResult(body);
      setRan({ text: query, parameters: parsedParameters.value });
    } catch (failure) {
      setResult(null);
      setError(
        failure instanceof ApiError
          ? { message: failure.message, code: failure.code, position: failure.position }
          : { message: String(failure), code: 'Error', position: null },
      );
    } finally {
      setBusy(false);
    }
  }

  function onKeyDown(event: KeyboardEvent) {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      void run();
    }
  }

  return (
    <div className="query">
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void run();
        }}
      >
        <label htmlFor="rql">Query (RQL) — Ctrl+Enter runs it</label>
        <RqlEditor
          value={text}
          invalid={error?.position != null}
          describedBy={error ? 'query-error' : undefined}
          onChange={setText}
          onKeyDown={onKeyDown}
        />
        {error && <QueryErrorView error={error} text={text} />}
        <label htmlFor="parameters">Parameters (JSON object, used as $name)</label>
        <textarea
          id="parameters"
          spellCheck={false}
          rows={2}
          value={parameters}
          aria-invalid={parsedParameters.error !== null}
          onChange={(event) => setParameters(event.target.value)}
          onKeyDown={onKeyDown}
        />
        {parsedParameters.error && <p className="error">{parsedParameters.error}</p>}
        <label className="inline">
          <input
            type="checkbox"
            checked={waitForIndex}
            onChange={(event) => setWaitForIndex(event.target.checked)}
          />{' '}
          Wait until the index has caught up (WaitForNonStaleResults)
        </label>
        <button type="submit" disabled={busy || parsedParameters.error !== null}>
          Run
        </button>
      </form>
      {result && (
        <section aria-labelledby="results-heading" className="results">
          <h2 id="results-heading">Results</h2>
          <dl className="facts">
            <div>
              <dt>TotalResults</dt>
              <dd data-testid="total-results">{result.TotalResults}</dd>
            </div>
            <div>
              <dt>IsStale</dt>
              <dd data-testid="is-stale">{String(result.IsStale)}</dd>
            </div>
            <div>
              <dt>Index</dt>
              <dd data-testid="index-name">{result.IndexName ?? '(the collection, no index)'}</dd>
            </div>
            {result.DurationInMs !== undefined && (
              <div>
                <dt>Duration</dt>
                <dd>{result.DurationInMs} ms</dd>
              </div>
            )}
          </dl>
          {result.Timings && <TimingsChart timings={result.Timings} />}
          {plan && <PlanTree plan={plan} />}
          {ran && <ExportResults database={database} query={ran.text} parameters={ran.parameters} />}
          <fieldset className="view">
            <legend>Show as</legend>
            <label>
              <input type="radio" name="view" checked={view === 'table'} onChange={() => setView('table')} />{' '}
              Table
            </label>
            <label>
              <input type="radio" name="view" checked={view === 'json'} onChange={() => setView('json')} />{' '}
              JSON
            </label>
          </fieldset>
          {view === 'table' ? (
            (special ?? <ResultTable results={result.Results} />)
          ) : (
            <figure>
              <figcaption>Results as JSON</figcaption>
              <pre>{JSON.stringify(result.Results, null, 2)}</pre>
            </figure>
          )}
        </section>
      )}
    </div>
  );
}

/** The error under the editor; a syntax error also shows its line with a caret under the column. */
function QueryErrorView({ error, text }: { error: QueryError; text: string }) {
  const line = error.position ? (text.split('\n')[error.position.line - 1] ?? '') : null;
  return (
    <div id="query-error" role="alert" className="query-error">
      {error.position && (
        <p>
          Line {error.position.line}, column {error.position.column}:
        </p>
      )}
      {line !== null && error.position && (
        <pre aria-hidden="true">{`${line}\n${' '.repeat(Math.max(0, error.position.column - 1))}^`}</pre>
      )}
      <p>
        {error.message} <span className="code">({error.code})</span>
      </p>
    </div>
  );
}

function ResultTable({ results }: { results: unknown[] }) {
  const rows = results.map((row) =>
    typeof row === 'object' && row !== null ? (row as Record<string, unknown>) : { value: row },
  );
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))].filter((c) => c !== '@metadata');
  const idOf = (row: Record<string, unknown>) => {
    const metadata = row['@metadata'] as { '@id'?: unknown } | undefined;
    return typeof metadata?.['@id'] === 'string' ? metadata['@id'] : '';
  };
  return (
    <div className="table-scroll">
      <table>
        <caption>{results.length} rows on this page</caption>
        <thead>
          <tr>
            <th scope="col">@id</th>
            {columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity of their own (projections)
            <tr key={index}>
              <td>{idOf(row)}</td>
              {columns.map((column) => (
                <td key={column}>{cell(row[column])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function cell(value: unknown): string {
  if (value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function parseParameters(text: string): { value: Record<string, unknown>; error: string | null } {
  try {
    const value: unknown = JSON.parse(text || '{}');
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      return { value: value as Record<string, unknown>, error: null };
    }
  } catch {
    // said below
  }
  return { value: {}, error: 'Parameters are a JSON object, such as {"min": 30}.' };
}
