// A session is a unit of work (RavenDB's model): entities loaded or stored in it are tracked, the same
// id always gives the same object, and saveChanges() sends what changed (new, modified and deleted
// documents) as ONE bulk_docs batch: one ACID transaction on the server.
import { type QueryRequest, referencedIds } from '@rookery/protocol';
import { type AggressiveCacheHandle, disposable } from '../aggressive-cache-handle.js';
import type { DocumentConventions } from '../conventions.js';
import { clientError, DocumentNotFoundError, errorForCode } from '../errors.js';
import type { OpenedStream, RequestExecutor, RequestOptions } from '../http/request-executor.js';
import {
  BatchResponseSchema,
  GetDocumentsResponseSchema,
  parseResponse,
  type QueryResultBody,
  QueryResultSchema,
} from '../http/responses.js';
import { isJsonObject } from '../json-object.js';
import { DocumentQuery, type QueryRunner } from '../query/document-query.js';
import type { QuerySource } from '../query/query-builder.js';
import { DocumentStream } from '../streaming/document-stream.js';
import { buildBatch, documentsUrlChunks } from './session-requests.js';
import {
  type DocumentInfo,
  type EntityType,
  idKey,
  type Metadata,
  TrackedDocuments,
} from './tracked-documents.js';

/** What a session needs from its store. */
export interface SessionContext {
  executor: RequestExecutor;
  conventions: DocumentConventions;
  /** `/databases/{db}`, URL-encoded. */
  databasePath: string;
  /** A new id for a collection's prefix, from the store's HiLo generator. */
  generateId(tag: string): Promise<string>;
  /** The store-wide aggressive caching duration in force, if any. */
  aggressiveCacheMs(): number | undefined;
  /** Starts what aggressive caching needs (the changes connection); resolves when its watches are confirmed. */
  startAggressiveCaching(): Promise<void>;
}

export interface SessionOptions {
  /** Overrides the store's convention for this session. */
  useOptimisticConcurrency?: boolean;
  /** Aggressive caching for this session only (ms). */
  aggressiveCacheMs?: number;
}

export interface LoadOptions<T> {
  /** Paths in the loaded documents whose ids are loaded along (`Company`, `Lines[].Product`). */
  includes?: string[];
  /** Give loaded entities this class's prototype. */
  documentType?: EntityType<T>;
}

export interface StoreOptions {
  /** Expected change vector on save ('' = must not exist yet), overriding optimistic concurrency. */
  changeVector?: string | null;
}

export interface DocumentStreamOptions {
  /** Documents whose id starts with this, in id order. */
  startsWith?: string;
  /** Resume after this id. */
  startAfter?: string;
  /** A collection, in etag order (instead of startsWith). */
  collection?: string;
  pageSize?: number;
}

export class DocumentSession implements QueryRunner {
  private readonly tracked: TrackedDocuments;
  private requests = 0;
  private sessionAggressiveCacheMs: number | undefined;
  readonly advanced: SessionAdvanced;

  constructor(
    private readonly context: SessionContext,
    options: SessionOptions = {},
  ) {
    this.tracked = new TrackedDocuments(context.conventions.identityProperty);
    this.advanced = new SessionAdvanced(this, this.tracked, context, options.useOptimisticConcurrency);
    if (options.aggressiveCacheMs !== undefined)
      this.advanced.aggressivelyCacheFor(options.aggressiveCacheMs);
  }

  /**
   * Tracks an entity as new (or re-stored). The id is, in order: the one given, the entity's id property,
   * or a new HiLo id in its collection (`users/1-A`). The collection is `@metadata.@collection` if the
   * entity carries one (moved into the session's metadata), else the conventions' (class name).
   */
  async store(entity: object, id?: string, options: StoreOptions = {}): Promise<void> {
    const existing = this.tracked.infoFor(entity);
    if (existing !== undefined) {
      if (id !== undefined && id.toLowerCase() !== existing.id.toLowerCase()) {
        throw clientError('InvalidArgument', `This entity is already tracked as ${existing.id}, not ${id}`);
      }
      if (options.changeVector !== undefined) existing.expectedChangeVector = options.changeVector;
      return;
    }
    const record = entity as Record<string, unknown>;
    const metadata: Metadata = {};
    const carried = record['@metadata'];
    if (isJsonObject(carried)) {
      Object.assign(metadata, carried);
      delete record['@metadata'];
    }
    const collection =
      typeof metadata['@collection'] === 'string'
        ? metadata['@collection']
        : this.context.conventions.findCollectionName(entity);
    if (collection !== null) metadata['@collection'] = collection;
    const property = this.context.conventions.identityProperty;
    const ownId = property === null ? undefined : record[property];
    let documentId = id ?? (typeof ownId === 'string' && ownId !== '' ? ownId : undefined);
    if (documentId === undefined) {
      if (collection === null) {
        throw clientError(
          'InvalidArgument',
          'Cannot make an id for an entity without a collection: pass an id, use a class, or set @metadata.@collection',
        );
      }
      documentId = await this.context.generateId(
        this.context.conventions.transformCollectionToPrefix(collection),
      );
    }
    const info: DocumentInfo = { id: documentId, entity, metadata, changeVector: null, snapshot: null };
    if (options.changeVector !== undefined) info.expectedChangeVector = options.changeVector;
    this.tracked.trackNew(info);
  }

  load<T = Record<string, unknown>>(id: string, options?: LoadOptions<T>): Promise<T | null>;
  load<T = Record<string, unknown>>(
    ids: readonly string[],
    options?: LoadOptions<T>,
  ): Promise<Record<string, T | null>>;
  async load<T>(
    idOrIds: string | readonly string[],
    options: LoadOptions<T> = {},
  ): Promise<T | null | Record<string, T | null>> {
    const ids = typeof idOrIds === 'string' ? [idOrIds] : [...idOrIds];
    const toFetch = distinctIds(ids.filter((id) => this.tracked.lookup(id, options.documentType) === null));
    const includesToFetch = this.unknownIncludes(ids, options.includes ?? [], toFetch);
    if (toFetch.length > 0 || includesToFetch.length > 0) await this.fetch(toFetch, includesToFetch, options);
    const entityOf = (id: string) =>
      (this.tracked.lookup(id, options.documentType)?.entity ?? null) as T | null;
    if (typeof idOrIds === 'string') return entityOf(idOrIds);
    return Object.fromEntries(ids.map((id) => [id, entityOf(id)]));
  }

  /** Deletes on the next saveChanges: by entity (tracked) or by id (loaded or not). */
  delete(idOrEntity: string | object, expectedChangeVector?: string): void {
    const info =
      typeof idOrEntity === 'string' ? this.tracked.infoForId(idOrEntity) : this.tracked.infoFor(idOrEntity);
    if (info === undefined) {
      if (typeof idOrEntity !== 'string') {
        throw clientError(
          'InvalidArgument',
          'This entity is not tracked by the session: load it, or delete by id',
        );
      }
      this.tracked.deleted.set(idOrEntity.toLowerCase(), {
        id: idOrEntity,
        changeVector: expectedChangeVector ?? null,
      });
      return;
    }
    this.tracked.remove(info, true);
    if (expectedChangeVector !== undefined) {
      const pending = this.tracked.deleted.get(info.id.toLowerCase());
      if (pending !== undefined) pending.changeVector = expectedChangeVector;
    }
  }

  /** Sends every new, changed and deleted document as one transaction; nothing if nothing changed. */
  async saveChanges(): Promise<void> {
    const batch = buildBatch(this.tracked, this.advanced.useOptimisticConcurrency);
    if (batch === null) return;
    const { value } = await this.request<unknown>({
      method: 'POST',
      path: `${this.context.databasePath}/bulk_docs`,
      body: batch.body,
    });
    // Our own write will be notified too, but a read right after this save must not beat the notification
    // to the aggressive cache: everything cached before the save is revalidated on next use.
    this.context.executor.cache.markSuspect();
    const results = parseResponse(BatchResponseSchema, value, 'batch answer').Results;
    batch.puts.forEach((info, index) => {
      const result = results[batch.deletes.length + index];
      if (result === undefined || result.ChangeVector === null) return;
      info.changeVector = result.ChangeVector;
      info.metadata['@id'] = result.Id;
      info.metadata['@change-vector'] = result.ChangeVector;
      if (result.Collection !== null) info.metadata['@collection'] = result.Collection;
      if (result.LastModified !== null) info.metadata['@last-modified'] = result.LastModified;
      delete info.expectedChangeVector;
      info.snapshot = this.tracked.serialize(info);
    });
    for (const deleted of batch.deletes) {
      this.tracked.deleted.delete(deleted.toLowerCase());
      this.tracked.markMissing(deleted);
    }
  }

  query<T = Record<string, unknown>>(source: QuerySource, documentType?: EntityType<T>): DocumentQuery<T> {
    return new DocumentQuery<T>(this, source, documentType);
  }

  /** @internal QueryRunner: GET when the query fits in a URL (cacheable, like any GET), else POST. */
  async runQuery(request: QueryRequest): Promise<QueryResultBody> {
    const path = `${this.context.databasePath}/queries`;
    const query = new URLSearchParams({ query: request.Query });
    if (request.QueryParameters !== undefined)
      query.set('parameters', JSON.stringify(request.QueryParameters));
    if (request.WaitForNonStaleResults) query.set('waitForNonStaleResults', 'true');
    if (request.WaitForNonStaleResultsTimeoutMs !== undefined) {
      query.set('waitForNonStaleResultsTimeoutMs', String(request.WaitForNonStaleResultsTimeoutMs));
    }
    const getPath = `${path}?${query}`;
    const options: RequestOptions =
      getPath.length <= this.context.conventions.maxQueryUrlLength
        ? { method: 'GET', path: getPath, cache: true }
        : { method: 'POST', path, body: JSON.stringify(request), cache: true, idempotent: true };
    const { value } = await this.request<unknown>(options);
    const answer = parseResponse(QueryResultSchema, value, 'query answer');
    this.tracked.addIncludes(answer.Includes);
    return answer;
  }

  /** @internal QueryRunner */
  trackQueryResult(document: Record<string, unknown>, documentType?: EntityType<unknown>): object {
    return this.tracked.trackLoaded(document, documentType);
  }

  /** @internal Every request of the session goes through here: counted, and cached as the session says. */
  async request<T>(options: RequestOptions): Promise<{ value: T; source: string }> {
    this.countRequest();
    const aggressive = this.sessionAggressiveCacheMs ?? this.context.aggressiveCacheMs();
    const { value, response } = await this.context.executor.json<T>({
      ...options,
      aggressiveCacheMs: options.cache ? aggressive : undefined,
    });
    return { value, source: response.source };
  }

  /** @internal */
  openStream(what: string, options: RequestOptions): DocumentStream<never> {
    return new DocumentStream(what, (signal): Promise<OpenedStream> => {
      this.countRequest();
      return this.context.executor.openStream({ ...options, signal });
    });
  }

  /** @internal */
  setAggressiveCacheMs(ms: number | undefined): void {
    this.sessionAggressiveCacheMs = ms;
    if (ms !== undefined) void this.context.startAggressiveCaching().catch(() => undefined);
  }

  get numberOfRequests(): number {
    return this.requests;
  }

  /** @internal This session's own aggressive caching duration, if set. */
  get aggressiveCacheMs(): number | undefined {
    return this.sessionAggressiveCacheMs;
  }

  private countRequest(): void {
    const limit = this.context.conventions.maxNumberOfRequestsPerSession;
    if (this.requests >= limit) {
      throw errorForCode({
        code: 'TooManyRequestsInSession',
        status: null,
        detail: `This session made ${limit} requests, its limit (maxNumberOfRequestsPerSession): load several ids at once, use includes, or open a new session per unit of work`,
      });
    }
    this.requests += 1;
  }

  /**
   * The ids the include paths reach from the requested documents this session already has, and that it
   * does not know yet. Having a document is no reason to skip its includes: the caller asked for them so
   * that following its references needs no request. Paths are read on the entity as it is now, since that
   * is what the caller will follow.
   */
  private unknownIncludes(ids: readonly string[], includes: readonly string[], toFetch: string[]): string[] {
    if (includes.length === 0) return [];
    const fetching = new Set(toFetch.map(idKey));
    const reached: string[] = [];
    for (const id of ids) {
      const entity = this.tracked.infoForId(id)?.entity;
      if (entity === undefined) continue;
      for (const path of includes) {
        for (const ref of referencedIds(entity, path)) {
          if (!fetching.has(idKey(ref)) && !this.tracked.knows(ref)) reached.push(ref);
        }
      }
    }
    return distinctIds(reached);
  }

  /**
   * Loads `ids` with the include paths, and `includedIds` (reached from documents the session has) as
   * they are, in the same requests. The latter are kept as includes, not tracked: they were not asked for,
   * and must not take the requested documents' type.
   */
  private async fetch<T>(ids: string[], includedIds: string[], options: LoadOptions<T>): Promise<void> {
    const all = [...ids, ...includedIds];
    const asIncluded = new Set(includedIds.map(idKey));
    // The paths apply to the documents being loaded; on those already in hand unknownIncludes read them.
    const includes = ids.length > 0 ? (options.includes ?? []) : [];
    for (const path of documentsUrlChunks(this.context.databasePath, all, includes)) {
      let value: unknown;
      try {
        ({ value } = await this.request<unknown>({ method: 'GET', path, cache: true }));
      } catch (error) {
        // The server answers 404 for one missing id without includes: load's answer is null.
        if (error instanceof DocumentNotFoundError && all.length === 1) {
          this.tracked.markMissing(all[0]!);
          continue;
        }
        throw error;
      }
      const answer = parseResponse(GetDocumentsResponseSchema, value, 'documents answer');
      const chunkIds = new URLSearchParams(path.slice(path.indexOf('?') + 1)).getAll('id');
      answer.Results.forEach((document, index) => {
        const id = chunkIds[index]!;
        if (asIncluded.has(idKey(id))) this.tracked.addInclude(id, document);
        else if (document === null) this.tracked.markMissing(id);
        else this.tracked.trackLoaded(document, options.documentType);
      });
      this.tracked.addIncludes(answer.Includes);
    }
  }
}

/** The ids once each, compared as the server compares them (case-insensitively), first spelling kept. */
function distinctIds(ids: readonly string[]): string[] {
  const byKey = new Map<string, string>();
  for (const id of ids) if (!byKey.has(idKey(id))) byKey.set(idKey(id), id);
  return [...byKey.values()];
}

/** `session.advanced`: what most code does not need. */
export class SessionAdvanced {
  private optimistic: boolean | undefined;

  constructor(
    private readonly session: DocumentSession,
    private readonly tracked: TrackedDocuments,
    private readonly context: SessionContext,
    useOptimisticConcurrency: boolean | undefined,
  ) {
    this.optimistic = useOptimisticConcurrency;
  }

  /** Send loaded change vectors with saves (a concurrent change then fails with ConcurrencyConflictError). */
  get useOptimisticConcurrency(): boolean {
    return this.optimistic ?? this.context.conventions.useOptimisticConcurrency;
  }
  set useOptimisticConcurrency(value: boolean) {
    this.optimistic = value;
  }

  get numberOfRequests(): number {
    return this.session.numberOfRequests;
  }

  get maxNumberOfRequestsPerSession(): number {
    return this.context.conventions.maxNumberOfRequestsPerSession;
  }

  getChangeVectorFor(entity: object): string | null {
    return this.infoOf(entity).changeVector;
  }

  /** The entity's metadata; changes to it are saved with the entity (`@expires`, your own keys…). */
  getMetadataFor(entity: object): Metadata {
    return this.infoOf(entity).metadata;
  }

  getDocumentId(entity: object): string | null {
    return this.tracked.infoFor(entity)?.id ?? null;
  }

  isLoaded(id: string): boolean {
    return this.tracked.infoForId(id) !== undefined;
  }

  hasChanged(entity: object): boolean {
    return this.tracked.hasChanged(this.infoOf(entity));
  }

  hasChanges(): boolean {
    if (this.tracked.deleted.size > 0) return true;
    for (const info of this.tracked.all) if (this.tracked.hasChanged(info)) return true;
    return false;
  }

  /** Stops tracking an entity: later changes to it are not saved, and the next load fetches it again. */
  evict(entity: object): void {
    const info = this.tracked.infoFor(entity);
    if (info !== undefined) this.tracked.remove(info, false);
  }

  clear(): void {
    this.tracked.clear();
  }

  /**
   * Answers this session's reads from the cache without a request while they are younger than `ms` and no
   * change was notified since. Dispose the handle (or `using`) to stop.
   */
  aggressivelyCacheFor(ms: number): AggressiveCacheHandle {
    const previous = this.session.aggressiveCacheMs;
    this.session.setAggressiveCacheMs(ms);
    return disposable(
      () => this.session.setAggressiveCacheMs(previous),
      () => this.context.startAggressiveCaching(),
    );
  }

  /**
   * Streams a query's results, or documents by id prefix / collection, as they are read: not tracked,
   * not paged, no limit. `for await (const { id, document } of session.advanced.stream(query))`.
   */
  stream<T>(source: DocumentQuery<T> | DocumentStreamOptions): DocumentStream<T> {
    if (source instanceof DocumentQuery) {
      return this.session.openStream(`query ${source.toString().split('\n')[0]}`, {
        method: 'POST',
        path: `${this.context.databasePath}/streams/queries`,
        body: JSON.stringify(source.toRequest()),
        idempotent: true,
      }) as DocumentStream<T>;
    }
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(source)) if (value !== undefined) query.set(key, String(value));
    return this.session.openStream(`documents ${query}`, {
      method: 'GET',
      path: `${this.context.databasePath}/streams/docs?${query}`,
    }) as DocumentStream<T>;
  }

  private infoOf(entity: object) {
    const info = this.tracked.infoFor(entity);
    if (info === undefined) throw clientError('InvalidArgument', 'This entity is not tracked by the session');
    return info;
  }
}
