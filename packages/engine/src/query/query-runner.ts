import { hash } from 'node:crypto';
import {
  type FacetResult,
  type IndexDefinition,
  type QueryParameters,
  type QueryResult,
  RookeryError,
  referencedIds,
  type SuggestionResult,
} from '@rookery/protocol';
import type { FieldPath, NumericValue, RqlQuery } from '@rookery/rql';
import type { Database } from '../database.js';
import { collectionsOf } from '../indexing/index-stats.js';
import { DEFAULT_MAX_RESPONSE_BYTES, ResponseBudget } from '../response-budget.js';
import { chooseAutoIndex } from './auto-index.js';
import { RqlCompiler } from './compile-rql.js';
import type { IndexCatalog } from './index-catalog.js';
import type { IndexReader } from './index-reader.js';
import { parsedQuery } from './parsed-queries.js';
import { QueryStream } from './query-stream.js';
import { ResultCache } from './result-cache.js';

/** What queries need from the indexing side (the indexer runs in another process). */
export interface IndexingControl {
  /** Creates an index (an automatic one); resolves once its file exists. */
  putIndex(definition: IndexDefinition): Promise<void>;
  /** Resolves true once the index has caught up with the database, false after the timeout. */
  waitForNonStale(name: string, timeoutMs: number): Promise<boolean>;
  /** Deletes an automatic index once `successor` has caught up. */
  retireWhenCaughtUp(name: string, successor: string): void;
}

export interface QueryOptions {
  query: string;
  parameters?: QueryParameters;
  waitForNonStaleResults?: boolean;
  waitForNonStaleResultsTimeoutMs?: number;
}

export interface QueryAnswer {
  result: QueryResult & { Facets?: FacetResult[]; Suggestions?: SuggestionResult[] };
}

const DEFAULT_PAGE_SIZE = 1_024;
const MAX_PAGE_SIZE = 10_000;
const DEFAULT_WAIT_MS = 15_000;
const PAGE_WINDOW = { defaultTake: DEFAULT_PAGE_SIZE, maxTake: MAX_PAGE_SIZE };
/** A stream has no page size: every match, or the query's own `limit` (SQLite takes this as no limit). */
const STREAM_WINDOW = { defaultTake: Number.MAX_SAFE_INTEGER, maxTake: Number.MAX_SAFE_INTEGER };
/**
 * Sort keys one query may have: each is a lookup per candidate, and past a handful a key only orders ties
 * of all the keys before it. Far below MAX_AUTO_INDEX_FIELDS, so a long `order by` is refused for itself.
 */
export const MAX_ORDER_BY_KEYS = 16;
/** Per database: a few thousand typical pages of results. */
export const DEFAULT_RESULT_CACHE_BYTES = 16 * 1024 * 1024;

/** A parsed and planned query, before it runs: enough to answer If-None-Match without running it. */
export interface PreparedQuery {
  ast: RqlQuery;
  compiler: RqlCompiler;
  reader: IndexReader | null;
  collection: string | null;
  resultEtag: string;
  isStale: boolean;
  /** How far the index had read when the query was prepared (0 without an index): what its answer says. */
  indexEtag: number;
  parseMs: number;
}

export interface QueryRunnerOptions {
  /** Bytes of recent answers kept by result etag (0: none); DEFAULT_RESULT_CACHE_BYTES by default. */
  resultCacheBytes?: number;
  /** Characters of JSON one answer (or one streamed row) may hold; DEFAULT_MAX_RESPONSE_BYTES by default. */
  maxResponseBytes?: number;
}

/** What a query refused for its size can do instead. */
const PAGE_ADVICE =
  'ask for a smaller page (limit), select fewer fields, or stream the results with POST /databases/{db}/streams/queries';
const ROW_ADVICE = 'one result would hold more than that: load fewer or smaller documents into it';

export class QueryRunner {
  private readonly results: ResultCache<QueryAnswer>;
  private readonly maxResponseBytes: number;
  /**
   * Automatic indexes being created, by lower-case name: queries arriving meanwhile that need the same one
   * wait for that creation instead of sending the indexer a request each.
   */
  private readonly creating = new Map<string, Promise<void>>();

  constructor(
    private readonly db: Database,
    private readonly catalog: IndexCatalog,
    private readonly control: IndexingControl,
    options: QueryRunnerOptions = {},
  ) {
    this.results = new ResultCache(options.resultCacheBytes ?? DEFAULT_RESULT_CACHE_BYTES);
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  }

  /** Parses, picks (or creates) the index, waits if asked, and computes the result etag. */
  async prepare(options: QueryOptions): Promise<PreparedQuery> {
    const started = performance.now();
    const ast = parsedQuery(options.query);
    const parseMs = performance.now() - started;
    const compiler = new RqlCompiler(ast, options.parameters ?? {});
    if (ast.groupBy) {
      throw new RookeryError(
        'InvalidQuery',
        'group by on a collection is not supported yet: define a map/reduce index and query it with from index',
      );
    }
    // Compile everything once up front so field needs are known (and bad input fails before any work).
    compiler.where();
    const orderBy = compiler.orderBy();
    if (orderBy.length > MAX_ORDER_BY_KEYS) {
      throw new RookeryError(
        'InvalidQuery',
        `The query sorts by ${orderBy.length} keys; a query sorts by at most ${MAX_ORDER_BY_KEYS}. Sort by fewer ` +
          'fields (the later ones only order ties), or sort the page yourself',
      );
    }
    compiler.facets();
    compiler.suggestions();

    let reader: IndexReader | null = null;
    let collection: string | null = null;
    if (ast.from.kind === 'index') {
      reader = this.catalog.reader(ast.from.name);
      if (!reader) {
        throw new RookeryError(
          'IndexNotFound',
          `There is no index named ${ast.from.name}; list them with GET /databases/${this.db.name}/indexes`,
        );
      }
    } else {
      collection = ast.from.name === '@all_docs' ? null : ast.from.name;
      const needsIndex =
        ast.where !== undefined ||
        (ast.orderBy?.length ?? 0) > 0 ||
        ast.select?.kind === 'selectFacets' ||
        ast.select?.kind === 'selectSuggest';
      if (needsIndex) {
        if (collection === null) {
          throw new RookeryError(
            'InvalidQuery',
            'from @all_docs can only list documents; filter or sort through a collection or an index',
          );
        }
        reader = await this.autoIndex(collection, compiler);
      }
    }

    if (reader && options.waitForNonStaleResults) {
      const timeout = options.waitForNonStaleResultsTimeoutMs ?? DEFAULT_WAIT_MS;
      const caughtUp = await this.control.waitForNonStale(reader.definition.Name, timeout);
      if (!caughtUp) {
        throw new RookeryError(
          'StaleResultsTimeout',
          `Index ${reader.definition.Name} was still stale after ${timeout} ms; retry, raise ` +
            'WaitForNonStaleResultsTimeoutMs, or accept stale results',
        );
      }
      // The file may have been replaced while we waited (a worker's build adopted, a reset): the catalog
      // then closed the reader we hold on the next look, so answer from the current one.
      const name = reader.definition.Name;
      reader = this.catalog.reader(name);
      if (!reader) {
        throw new RookeryError(
          'IndexNotFound',
          `Index ${name} was deleted while the query waited for it; list them with GET /databases/${this.db.name}/indexes`,
        );
      }
    }
    const indexEtag = reader ? reader.lastEtag() : 0;
    // While a changed definition builds beside it, the old index answers, stale (RavenDB's side-by-side index).
    const isStale = reader
      ? this.db.hasChangesAfter(collectionsOf(reader.definition), indexEtag) ||
        this.catalog.isReplacing(reader.definition.Name)
      : false;
    // An index that has caught up answers the same whatever etag it last recorded (it may still move past
    // writes to other collections), so only a stale index's position is part of the result etag.
    const indexState = isStale ? String(indexEtag) : 'current';
    // A collection query may move from one automatic index to the one that extends it (the old one retires
    // once the new one caught up): both answer it alike when current, so the etag names the collection then.
    const answeredBy =
      collection !== null && !isStale ? `auto:${collection.toLowerCase()}` : (reader?.definition.Name ?? '');
    // One call of the one-shot hash: a Hash object per query cost more than the hashing (3% of a tenant's CPU).
    const key = `${options.query}\u0000${JSON.stringify(options.parameters ?? {})}\u0000${answeredBy}:${indexState}:${this.db.lastEtag}`;
    const resultEtag = `"${hash('sha1', key, 'base64url')}"`;
    return { ast, compiler, reader, collection, resultEtag, isStale, indexEtag, parseMs };
  }

  /**
   * Runs a prepared query, or answers it from the recent results when its result etag (hence its answer) is
   * unchanged. Asking for timings or explanations always runs it: those describe this run.
   */
  run(prepared: PreparedQuery): QueryAnswer {
    const diagnostics = (prepared.ast.include ?? []).some(
      (i) => i.kind === 'call' && ['timings', 'explanations'].includes(i.name.toLowerCase()),
    );
    const owner = prepared.reader ?? this.db;
    if (!diagnostics) {
      const cached = this.results.get(prepared.resultEtag, owner);
      if (cached) return cached;
    }
    const { answer, chars } = this.execute(prepared);
    // The documents' characters, counted while gathering them, stand for the answer's size: serialising it
    // once more only to measure it cost a full copy of the answer.
    if (!diagnostics) this.results.set(prepared.resultEtag, owner, answer, chars + 1024);
    return answer;
  }

  /**
   * A prepared query's results as a stream of pages (`/streams/queries`, see query-stream.ts): the query's
   * `limit` and `offset` apply, no page size does.
   */
  stream(prepared: PreparedQuery): QueryStream {
    const projection =
      prepared.ast.select?.kind === 'selectFields'
        ? (documents: Record<string, unknown>[], seen: Set<string>) =>
            documents.flatMap((doc) => this.project(doc, prepared, seen, null))
        : null;
    return new QueryStream(this.db, prepared, windowOf(prepared, STREAM_WINDOW), projection);
  }

  private execute(prepared: PreparedQuery): { answer: QueryAnswer; chars: number } {
    const timings: Record<string, number> = { parse: round(prepared.parseMs) };
    let mark = performance.now();
    const lap = (name: string) => {
      const now = performance.now();
      timings[name] = round(now - mark);
      mark = now;
    };
    const { ast, compiler, reader } = prepared;
    const { skip, take } = windowOf(prepared, PAGE_WINDOW);
    const includeNames = new Set(
      (ast.include ?? []).filter((i) => i.kind === 'call').map((i) => i.name.toLowerCase()),
    );
    const base = {
      Includes: {} as Record<string, unknown>,
      SkippedResults: 0,
      IsStale: prepared.isStale,
      IndexName: reader?.definition.Name ?? null,
      IndexEtag: prepared.indexEtag,
      ResultEtag: prepared.resultEtag,
    };

    if (ast.select?.kind === 'selectFacets' || ast.select?.kind === 'selectSuggest') {
      if (!reader) throw new Error('facets and suggestions always run on an index');
      const where = compiler.where();
      let facets: FacetResult[] | undefined;
      let suggestions: SuggestionResult[] | undefined;
      if (ast.select.kind === 'selectFacets') facets = reader.facets(where, compiler.facets());
      else {
        suggestions = compiler.suggestions().map((s) => ({
          Name: s.name,
          Suggestions: reader.suggest(s.field, s.term, s.max),
        }));
      }
      lap('query');
      const results = facets ?? suggestions ?? [];
      const answer = {
        result: {
          ...base,
          Results: results,
          TotalResults: results.length,
          DurationInMs: round(sum(timings)),
          ...(includeNames.has('timings') ? { Timings: timings } : {}),
        },
      };
      return { answer, chars: JSON.stringify(results).length };
    }

    // Documents are counted against the response budget as they are read, one at a time, and a projection
    // is made from each as it comes, so neither the page's documents nor their text are ever all held at once.
    const budget = new ResponseBudget(this.maxResponseBytes, PAGE_ADVICE);
    const projecting = ast.select?.kind === 'selectFields';
    const includePaths = (ast.include ?? []).filter((i): i is FieldPath => i.kind === 'field');
    const results: unknown[] = [];
    const returned = new Set<string | undefined>();
    const referenced: string[] = [];
    const seen = new Set<string>();
    const gather = (json: string) => {
      if (!projecting) budget.add(json.length);
      const doc = JSON.parse(json) as Record<string, unknown>;
      returned.add(idOf(doc)?.toLowerCase());
      for (const path of includePaths)
        for (const id of referencedIds(doc, compiler.fieldName(path))) referenced.push(id);
      if (projecting) results.push(...this.project(doc, prepared, seen, budget));
      else results.push(doc);
    };
    let total: number;
    let plan: QueryResult['Plan'];
    if (reader) {
      const page = reader.run({ where: compiler.where(), orderBy: compiler.orderBy(), skip, take });
      lap('query');
      total = page.total;
      plan = page.plan;
      for (const entry of page.entries) {
        if (entry.stored !== null) gather(entry.stored);
        else if (entry.docId !== null) {
          // The index may be a moment behind a delete: a document that is gone is skipped, never invented.
          const loaded = this.db.get(entry.docId);
          if (loaded) gather(loaded.json);
        }
      }
      lap('load');
    } else {
      total = this.db.collectionCount(prepared.collection);
      for (const document of this.db.collectionDocuments(prepared.collection, skip, take))
        gather(document.json);
      plan = { Operation: 'CollectionScan', Details: `${prepared.collection ?? '@all_docs'} in etag order` };
      lap('load');
    }

    const includes: Record<string, unknown> = {};
    if (includePaths.length > 0) {
      for (const id of referenced) {
        if (returned.has(id.toLowerCase()) || id in includes) continue;
        const loaded = this.db.get(id);
        if (loaded) budget.add(loaded.json.length);
        includes[id] = loaded ? JSON.parse(loaded.json) : null;
      }
      lap('includes');
    }
    const answer = {
      result: {
        ...base,
        Includes: includes,
        Results: results,
        TotalResults: total,
        DurationInMs: round(sum(timings)),
        ...(includeNames.has('timings') ? { Timings: timings } : {}),
        ...(includeNames.has('explanations') || includeNames.has('timings') ? { Plan: plan } : {}),
      },
    };
    return { answer, chars: budget.total };
  }

  private async autoIndex(collection: string, compiler: RqlCompiler): Promise<IndexReader> {
    const choice = chooseAutoIndex(
      {
        collection,
        fields: compiler.usedFields,
        searched: compiler.searchedFields,
        spatial: compiler.spatialSources,
      },
      this.catalog.definitions(),
    );
    const name = choice.kind === 'use' ? choice.name : choice.definition.Name;
    if (choice.kind === 'create') {
      const key = name.toLowerCase();
      let created = this.creating.get(key);
      if (!created) {
        const { definition, supersedes } = choice;
        created = this.control.putIndex(definition).then(() => {
          if (supersedes) this.control.retireWhenCaughtUp(supersedes, name);
        });
        this.creating.set(key, created);
        void created.finally(() => this.creating.delete(key)).catch(() => undefined);
      }
      await created;
    }
    const reader = this.catalog.reader(name);
    if (!reader)
      throw new RookeryError('DatabaseUnavailable', `Automatic index ${name} could not be opened; retry`);
    return reader;
  }

  /**
   * `select a, b.c as d, l.Name` with `load x as l`: the row made from one document (and the documents it
   * loads), or none when `select distinct` saw it already. `seen`: the rows already returned, for
   * `select distinct` over several pages of a stream. `page`: the answer's budget, which counts the row; the
   * documents a row loads are held to the same limit on their own (a stream has no page budget, but no row
   * may load without bound either).
   */
  private project(
    doc: Record<string, unknown>,
    prepared: PreparedQuery,
    seen: Set<string>,
    page: ResponseBudget | null,
  ): unknown[] {
    const { ast, compiler } = prepared;
    if (ast.select?.kind !== 'selectFields') return [doc];
    const loads = ast.load ?? [];
    const projections = ast.select.projections;
    const scope = new Map<string, unknown>();
    const loading = new ResponseBudget(this.maxResponseBytes, ROW_ADVICE);
    for (const load of loads) {
      const [id] = referencedIds(doc, compiler.fieldName(load.path));
      const loaded = id ? this.db.get(id) : null;
      if (loaded) loading.add(loaded.json.length);
      scope.set(load.alias, loaded ? JSON.parse(loaded.json) : null);
    }
    const row: Record<string, unknown> = {};
    for (const p of projections) {
      if (p.expression.kind === 'call') {
        if (p.expression.name.toLowerCase() !== 'id' || p.expression.args.length > 0) {
          throw new RookeryError(
            'InvalidQuery',
            `select ${p.expression.name}() is not supported yet (line ${p.position.start.line}, column ` +
              `${p.position.start.column}); select fields or id()`,
          );
        }
        row[p.alias ?? 'Id'] = idOf(doc);
        continue;
      }
      const segments = p.expression.segments.map((s) => s.name);
      const [head, ...rest] = segments;
      const name = p.alias ?? segments.at(-1) ?? '';
      if (head !== undefined && scope.has(head) && rest.length > 0)
        row[name] = valueAt(scope.get(head), rest);
      else row[name] = valueAt(doc, compiler.fieldName(p.expression).split('.'));
    }
    if (!ast.select.distinct && page === null) return [row];
    // The row's text: its size for the page's budget, and its key for `select distinct`.
    const text = JSON.stringify(row);
    if (ast.select.distinct) {
      if (seen.has(text)) return [];
      seen.add(text);
    }
    page?.add(text.length);
    return [row];
  }
}

function idOf(doc: Record<string, unknown>): string | undefined {
  const meta = doc['@metadata'] as Record<string, unknown> | undefined;
  return typeof meta?.['@id'] === 'string' ? meta['@id'] : undefined;
}

function valueAt(value: unknown, segments: readonly string[]): unknown {
  let current: unknown = value;
  for (const raw of segments) {
    const spread = raw.endsWith('[]');
    const name = spread ? raw.slice(0, -2) : raw;
    if (Array.isArray(current)) {
      current = current.map((item) =>
        item && typeof item === 'object' ? (item as Record<string, unknown>)[name] : undefined,
      );
    } else if (current && typeof current === 'object') {
      current = (current as Record<string, unknown>)[name];
    } else return null;
  }
  return current ?? null;
}

/** The query's `offset` and `limit`, the limit defaulted and capped: a page is capped, a stream is not. */
function windowOf(
  prepared: PreparedQuery,
  limits: { defaultTake: number; maxTake: number },
): { skip: number; take: number } {
  const { ast, compiler } = prepared;
  // A parameter that is null stands for no offset or no limit: RavenDB's clients page every query with
  // `limit $p0, $p1` and send null for the offset when only take() was called.
  const count = (value: NumericValue | undefined, what: string) =>
    value === undefined || compiler.value(value) === null
      ? null
      : nonNegative(compiler.number(value, what), what);
  const skip = count(ast.offset, 'offset') ?? 0;
  const take = count(ast.limit, 'limit') ?? limits.defaultTake;
  return { skip, take: Math.min(take, limits.maxTake) };
}

function nonNegative(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 0) {
    throw new RookeryError('InvalidQuery', `${what} must be a whole number ≥ 0, got ${value}`);
  }
  return value;
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;
const sum = (t: Record<string, number>) => Object.values(t).reduce((a, b) => a + b, 0);
