// JavaScript index definitions (RavenDB style) evaluated inside a V8 isolate (isolated-vm).
//
// Tenants are strangers, so their map/reduce code never runs in the host's V8 heap: each compiled
// program owns one isolate with a memory limit, and every call into it carries a time limit. Data
// crosses the boundary as one JSON string in and one JSON string out per call (never one bridge call
// per document), which keeps the map path fast: compile once, then a few calls per batch.
//
// Mapping is metered per document: the documents of a batch are loaded into the isolate once, then
// mapped in calls of at most a time slice each, so a document that runs away is stopped after its own
// limit and named, and the documents around it keep their results (see `map`).
//
// Everything is synchronous; the caller runs inside a dedicated indexer process.
//
// Note: isolated-vm on Node 20+ asks for `--no-node-snapshot` in the host process.

import ivm from 'isolated-vm';
import { MISSING_GLOBAL_HINT, RUNTIME_FILENAME, RUNTIME_SOURCE } from './runtime.js';

export interface SandboxLimits {
  /** Heap limit of the isolate in MB (isolated-vm's minimum is 8). Default 64. */
  memoryMb: number;
  /** Wall-clock limit of one call into the isolate that is not mapping documents (evaluating the definition, a reduce chunk), in ms. Default 250. */
  timeoutMs: number;
  /** Wall-clock time one document's maps may take, in ms; a document over it is an index error naming it. Default 250. */
  documentTimeoutMs: number;
  /**
   * Most entries the maps may emit for one document; a document over it is an index error naming it.
   * Default 10,000. RavenDB 3.x had the same guard (Raven/MaxSimpleIndexOutputsPerDocument and
   * Raven/MaxMapReduceIndexOutputsPerDocument, per index: MaxIndexOutputsPerDocument); 4.0+ only warns
   * about a high "fanout" (ravendb/docs, Documentation/5.2/.../indexes/indexing-nested-data). Here one
   * tenant's fanout would fill the shared host's disk and the indexer's memory, so it stays an error.
   */
  maxEntriesPerDocument: number;
  /**
   * Time one batch may spend mapping before it is cut short (used by the batch preparer): the rest of
   * the batch comes in the next one, after the other indexes had their turn. Default 1,000.
   */
  batchTimeMs: number;
}

export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  memoryMb: 64,
  timeoutMs: 250,
  documentTimeoutMs: 250,
  maxEntriesPerDocument: 10_000,
  batchTimeMs: 1_000,
});

export type MapOutcome = { ok: true; entries: Record<string, unknown>[] } | { ok: false; error: string };

export interface JsIndexProgram {
  /** Collections named by map() calls, in order, deduplicated. */
  readonly collections: readonly string[];
  readonly hasReduce: boolean;
  /**
   * Runs every map registered for `collection` over a batch; one outcome per doc, same order. One doc
   * throwing, running over its time limit or emitting too many entries does not affect the others.
   * With `deadline` (a `Date.now()` time), mapping stops once it has passed, so the outcomes may cover
   * only a prefix of `docs` (never none). Throws when the sandbox itself fails (memory limit).
   */
  map(collection: string, docs: readonly Record<string, unknown>[], deadline?: number): MapOutcome[];
  /** For reduce indexes: the group key of each map entry, as a canonical JSON string (object keys sorted). */
  reduceKeys(entries: readonly Record<string, unknown>[]): string[];
  /** Reduces groups (each an array of map entries sharing a key) to one result each, same order. */
  reduce(groups: readonly (readonly Record<string, unknown>[])[]): Record<string, unknown>[];
  dispose(): void;
}

export type SandboxErrorCode =
  | 'IndexCompilationFailed'
  | 'IndexTimeLimitExceeded'
  | 'IndexMemoryLimitExceeded'
  | 'IndexRuntimeError';

export class SandboxError extends Error {
  readonly code: SandboxErrorCode;

  constructor(code: SandboxErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SandboxError';
    this.code = code;
  }
}

export interface JsIndexSource {
  maps: readonly string[];
  reduce?: string;
}

type Dispatch = (op: string, a?: string | number, b?: string | number) => string;

const TIMEOUT_MESSAGE = 'Script execution timed out.';

export function resolveSandboxLimits(limits: Partial<SandboxLimits> | undefined): SandboxLimits {
  const resolved = { ...DEFAULT_SANDBOX_LIMITS, ...limits };
  if (!Number.isFinite(resolved.memoryMb) || resolved.memoryMb < 8) {
    throw new RangeError(`SandboxLimits.memoryMb must be a number >= 8 (got ${resolved.memoryMb})`);
  }
  for (const key of ['timeoutMs', 'documentTimeoutMs', 'batchTimeMs'] as const) {
    if (!Number.isFinite(resolved[key]) || resolved[key] <= 0) {
      throw new RangeError(`SandboxLimits.${key} must be a positive number (got ${resolved[key]})`);
    }
  }
  if (!Number.isInteger(resolved.maxEntriesPerDocument) || resolved.maxEntriesPerDocument < 1) {
    throw new RangeError(
      `SandboxLimits.maxEntriesPerDocument must be a positive integer (got ${resolved.maxEntriesPerDocument})`,
    );
  }
  return resolved;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function labelOf(filename: string): string {
  const m = /^map-(\d+)\.js$/.exec(filename);
  return m ? `maps[${m[1]}]` : filename === 'reduce.js' ? 'reduce' : filename;
}

/** Turns "Unexpected identifier 'b' [map-0.js:1:3]" into "Unexpected identifier 'b' (maps[0] line 1, column 3)". */
function describeSyntaxError(err: unknown): string {
  const message = errorText(err);
  const m = /\s*\[([^\]]+):(\d+):(\d+)\]$/.exec(message);
  if (!m) return message;
  return `${message.slice(0, m.index)} (${labelOf(m[1] ?? '')} line ${m[2]}, column ${m[3]})`;
}

/** Describes an error thrown by top-level tenant code, which crossed the isolate boundary as a copy. */
function describeTopLevelError(err: unknown): string {
  if (!(err instanceof Error)) return `Uncaught ${String(err)}`;
  let text = `${err.name}: ${err.message}`;
  const m = /\b(map-\d+\.js|reduce\.js):(\d+):(\d+)/.exec(err.stack ?? '');
  if (m) text += ` (at ${labelOf(m[1] ?? '')} line ${m[2]}, column ${m[3]})`;
  if (err.name === 'ReferenceError' && / is not defined$/.test(err.message))
    text += `. ${MISSING_GLOBAL_HINT}`;
  return text;
}

/** Parses a result string of the sandbox (tenant code may have tampered with the built-ins producing it). */
function parseResult(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new SandboxError(
      'IndexRuntimeError',
      'The index sandbox returned a result that is not valid JSON.',
      {
        cause: err,
      },
    );
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function toMapOutcome(raw: unknown): MapOutcome {
  if (isPlainObject(raw)) {
    if (raw['ok'] === true && Array.isArray(raw['entries'])) {
      const entries = raw['entries'] as unknown[];
      if (entries.every(isPlainObject)) return { ok: true, entries };
      return { ok: false, error: 'the map produced an entry that does not serialize to a JSON object' };
    }
    if (raw['ok'] === false && typeof raw['error'] === 'string') return { ok: false, error: raw['error'] };
  }
  return { ok: false, error: 'the sandbox returned a malformed map outcome' };
}

type ProgramState = 'ready' | 'disposed' | 'memory';

class IsolatedJsIndexProgram implements JsIndexProgram {
  readonly collections: readonly string[];
  readonly hasReduce: boolean;
  readonly #limits: SandboxLimits;
  readonly #isolate: ivm.Isolate;
  readonly #context: ivm.Context;
  readonly #dispatch: ivm.Reference<Dispatch>;
  readonly #collectionSet: ReadonlySet<string>;
  #state: ProgramState = 'ready';

  constructor(source: JsIndexSource, limits: SandboxLimits) {
    this.#limits = limits;
    this.#isolate = new ivm.Isolate({ memoryLimit: limits.memoryMb });
    try {
      this.#context = this.#isolate.createContextSync();
      const runtime = this.#isolate.compileScriptSync(RUNTIME_SOURCE, { filename: RUNTIME_FILENAME });
      this.#dispatch = runtime.runSync(this.#context, {
        reference: true,
        release: true,
        timeout: limits.timeoutMs,
      }) as ivm.Reference<Dispatch>;
      this.#call('limits', limits.maxEntriesPerDocument, undefined, 'starting the sandbox');

      source.maps.forEach((code, i) => {
        this.#evaluate('map', i, code, `map-${i}.js`, `maps[${i}]`);
      });
      if (source.reduce !== undefined && source.reduce.trim() !== '') {
        this.#evaluate('reduce', 0, source.reduce, 'reduce.js', 'reduce');
      }

      const info = parseResult(this.#call('info', undefined, undefined, 'reading the index definition'));
      const collections = isPlainObject(info) ? info['collections'] : undefined;
      if (!Array.isArray(collections) || !collections.every((c) => typeof c === 'string')) {
        throw new SandboxError(
          'IndexCompilationFailed',
          'The index definition could not be read back from its sandbox.',
        );
      }
      this.collections = Object.freeze([...collections]);
      this.#collectionSet = new Set(collections);
      this.hasReduce = isPlainObject(info) && info['hasReduce'] === true;
    } catch (err) {
      this.#release();
      throw err;
    }
  }

  map(collection: string, docs: readonly Record<string, unknown>[], deadline?: number): MapOutcome[] {
    this.#assertUsable();
    if (docs.length === 0) return [];
    if (!this.#collectionSet.has(collection)) return docs.map(() => ({ ok: true, entries: [] }));
    const what = `mapping ${docs.length} document(s) of collection ${JSON.stringify(collection)}`;
    this.#call('mapLoad', collection, JSON.stringify(docs), what);
    const { documentTimeoutMs } = this.#limits;
    const outcomes: MapOutcome[] = [];
    const take = (text: string) => {
      const parsed = parseResult(text);
      if (!Array.isArray(parsed) || outcomes.length + parsed.length > docs.length) {
        throw new SandboxError('IndexRuntimeError', 'The index sandbox returned a malformed map result.');
      }
      for (const raw of parsed) outcomes.push(toMapOutcome(raw));
    };
    // CPU time the current document has spent over the calls that were stopped in it.
    let spentCpuMs = 0;
    while (outcomes.length < docs.length) {
      if (deadline !== undefined && outcomes.length > 0 && Date.now() >= deadline) break;
      // A slice of at most the per-document limit (less if the deadline is nearer), and the call's own
      // limit the slice plus the per-document limit: a document the call is stopped in was started
      // inside the slice, so it had more than its whole limit.
      const sliceMs =
        deadline === undefined
          ? documentTimeoutMs
          : Math.max(1, Math.min(documentTimeoutMs, deadline - Date.now()));
      const before = outcomes.length;
      const cpuBefore = this.#isolate.cpuTime;
      let slice: string;
      try {
        slice = this.#call('mapRun', sliceMs, undefined, what, documentTimeoutMs + sliceMs);
      } catch (err) {
        if (!(err instanceof SandboxError) || err.code !== 'IndexTimeLimitExceeded') throw err;
        // The isolate survives a time limit: keep what the slice finished.
        take(this.#call('mapTake', undefined, undefined, what));
        // The call's limit is wall-clock, which also counts time this thread waited for a CPU. A
        // document is blamed only once the calls stopped in it alone (each call's first) have spent
        // its whole limit on the CPU between them, so however busy the machine, an innocent document
        // is never named: it is run again (the cursor is still on it), and one that loops forever
        // gathers CPU time at every try.
        const alone = outcomes.length === before;
        if (!alone) {
          spentCpuMs = 0;
          continue;
        }
        spentCpuMs += Number(this.#isolate.cpuTime - cpuBefore) / 1e6;
        if (spentCpuMs < documentTimeoutMs) continue;
        spentCpuMs = 0;
        outcomes.push({
          ok: false,
          error:
            `Index code exceeded the ${documentTimeoutMs} ms time limit per document. Look for infinite ` +
            'loops or expensive work per document in the index functions.',
        });
        this.#call('mapSkip', undefined, undefined, what);
        continue;
      }
      spentCpuMs = 0;
      take(slice);
    }
    this.#call('mapClear', undefined, undefined, what);
    return outcomes;
  }

  reduceKeys(entries: readonly Record<string, unknown>[]): string[] {
    this.#assertReduce();
    if (entries.length === 0) return [];
    const keys = this.#envelope(
      this.#call(
        'reduceKeys',
        JSON.stringify(entries),
        undefined,
        `computing group keys of ${entries.length} entries`,
      ),
    );
    if (!Array.isArray(keys) || keys.length !== entries.length || !keys.every((k) => typeof k === 'string')) {
      throw new SandboxError('IndexRuntimeError', 'The index sandbox returned malformed group keys.');
    }
    return keys as string[];
  }

  reduce(groups: readonly (readonly Record<string, unknown>[])[]): Record<string, unknown>[] {
    this.#assertReduce();
    if (groups.length === 0) return [];
    const results = this.#envelope(
      this.#call('reduce', JSON.stringify(groups), undefined, `reducing ${groups.length} group(s)`),
    );
    if (!Array.isArray(results) || results.length !== groups.length || !results.every(isPlainObject)) {
      throw new SandboxError('IndexRuntimeError', 'The index sandbox returned malformed reduce results.');
    }
    return results;
  }

  dispose(): void {
    if (this.#state === 'ready') this.#state = 'disposed';
    this.#release();
  }

  #release(): void {
    try {
      this.#dispatch?.release();
    } catch {
      // already released together with the isolate
    }
    try {
      this.#context?.release();
    } catch {
      // already released together with the isolate
    }
    if (!this.#isolate.isDisposed) this.#isolate.dispose();
  }

  #assertUsable(): void {
    if (this.#state === 'memory') {
      throw new SandboxError(
        'IndexMemoryLimitExceeded',
        `This index program was disposed after exceeding its ${this.#limits.memoryMb} MB memory limit; ` +
          'compile the index again (compileJsIndex) before using it.',
      );
    }
    if (this.#state === 'disposed') {
      throw new SandboxError('IndexRuntimeError', 'This index program has been disposed.');
    }
  }

  #assertReduce(): void {
    this.#assertUsable();
    if (!this.hasReduce) throw new SandboxError('IndexRuntimeError', 'This index has no reduce definition.');
  }

  #envelope(text: string): unknown {
    const parsed = parseResult(text);
    if (isPlainObject(parsed)) {
      if (parsed['ok'] === true) return parsed['value'];
      if (parsed['ok'] === false && typeof parsed['error'] === 'string') {
        throw new SandboxError('IndexRuntimeError', parsed['error']);
      }
    }
    throw new SandboxError('IndexRuntimeError', 'The index sandbox returned a malformed result.');
  }

  /** Evaluates one definition source at top level; every failure is a compilation failure of the index. */
  #evaluate(kind: 'map' | 'reduce', index: number, code: string, filename: string, label: string): void {
    if (typeof code !== 'string') {
      throw new SandboxError('IndexCompilationFailed', `${label} must be a string of JavaScript.`);
    }
    let script: ivm.Script;
    try {
      // Compiled once as written, for exact syntax error positions ...
      this.#isolate.compileScriptSync(code, { filename }).release();
      // ... and then wrapped in a function so each source has its own top-level scope (two maps may
      // both declare `const helper`). The wrapper's first line is hidden with a negative line offset.
      script = this.#isolate.compileScriptSync(`(function () {\n${code}\n})();`, {
        filename,
        lineOffset: -1,
      });
    } catch (err) {
      if (this.#isolate.isDisposed) throw this.#translate(err, `compiling ${label}`);
      throw new SandboxError(
        'IndexCompilationFailed',
        `Syntax error in ${label}: ${describeSyntaxError(err)}`,
        {
          cause: err,
        },
      );
    }
    this.#call('begin', kind, index, `evaluating ${label}`);
    try {
      script.runSync(this.#context, { timeout: this.#limits.timeoutMs, release: true });
    } catch (err) {
      if (this.#isolate.isDisposed || errorText(err) === TIMEOUT_MESSAGE) {
        throw this.#translate(err, `evaluating ${label}`);
      }
      throw new SandboxError(
        'IndexCompilationFailed',
        `Evaluating ${label} failed: ${describeTopLevelError(err)}`,
        {
          cause: err,
        },
      );
    }
    const problem = this.#call('end', undefined, undefined, `evaluating ${label}`);
    if (problem !== '') {
      throw new SandboxError('IndexCompilationFailed', `Invalid index definition: ${problem}.`);
    }
  }

  #call(
    op: string,
    a: string | number | undefined,
    b: string | number | undefined,
    what: string,
    timeoutMs = this.#limits.timeoutMs,
  ): string {
    this.#assertUsable();
    let result: unknown;
    try {
      result = this.#dispatch.applySync(undefined, [op, a, b], { timeout: timeoutMs });
    } catch (err) {
      throw this.#translate(err, what, timeoutMs);
    }
    if (typeof result !== 'string') {
      throw new SandboxError('IndexRuntimeError', `The index sandbox returned no result while ${what}.`);
    }
    return result;
  }

  #translate(err: unknown, what: string, timeoutMs = this.#limits.timeoutMs): SandboxError {
    const message = errorText(err);
    if (this.#isolate.isDisposed || /memory limit/i.test(message)) {
      if (this.#state === 'ready') this.#state = 'memory';
      this.#release();
      return new SandboxError(
        'IndexMemoryLimitExceeded',
        `Index code exceeded the ${this.#limits.memoryMb} MB memory limit while ${what}, so its sandbox was ` +
          'disposed. Make the index functions keep and emit less data (or index smaller batches), then ' +
          'compile the index again.',
        { cause: err },
      );
    }
    if (message === TIMEOUT_MESSAGE) {
      return new SandboxError(
        'IndexTimeLimitExceeded',
        `Index code exceeded the ${timeoutMs} ms time limit while ${what}. Look for infinite ` +
          'loops or expensive work per document in the index functions (or index smaller batches).',
        { cause: err },
      );
    }
    return new SandboxError('IndexRuntimeError', `Index code failed while ${what}: ${message}`, {
      cause: err,
    });
  }
}

/**
 * Compiles a JavaScript index definition into its own V8 isolate. Throws SandboxError
 * ('IndexCompilationFailed' for syntax errors, top-level exceptions and definitions that register
 * nothing; the time/memory codes when top-level code runs away). Call dispose() when done.
 */
export function compileJsIndex(source: JsIndexSource, limits?: Partial<SandboxLimits>): JsIndexProgram {
  const resolved = resolveSandboxLimits(limits);
  if (!Array.isArray(source.maps) || source.maps.length === 0) {
    throw new SandboxError('IndexCompilationFailed', 'An index definition needs at least one map.');
  }
  return new IsolatedJsIndexProgram(source, resolved);
}
