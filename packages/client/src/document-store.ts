// The entry point: one DocumentStore per database a program talks to. It owns the HTTP agent (TLS with
// the client certificate), the ETag cache, HiLo id generation, the changes connection, subscriptions and
// the two-factor session of a person's certificate. Sessions are cheap: open one per unit of work.
import type { AggressiveCacheHandle } from './aggressive-cache-handle.js';
import { AggressiveCaching } from './aggressive-caching.js';
import { type BulkInsertItem, type BulkInsertResult, bulkInsert } from './bulk-insert.js';
import { DEFAULT_CONVENTIONS, type DocumentConventions } from './conventions.js';
import { clientError } from './errors.js';
import { HttpCache } from './http/http-cache.js';
import { type RequestCounters, RequestExecutor } from './http/request-executor.js';
import { HiLoResponseSchema, parseResponse, TwoFactorSessionSchema } from './http/responses.js';
import { MultiTypeHiLoIdGenerator } from './ids/hilo.js';
import { DatabaseChanges } from './live/database-changes.js';
import type { LiveSocketOptions } from './live/live-socket.js';
import { DocumentSession, type SessionContext, type SessionOptions } from './session/document-session.js';
import { DocumentSubscriptions } from './subscriptions/document-subscriptions.js';
import { type ClientCertificate, type TlsClientOptions, tlsClientOptions } from './tls-options.js';

export interface DocumentStoreOptions {
  /** The gateway: `https://rookery.example.com` (or `https://localhost:8443` after `npm start`). */
  url: string;
  database: string;
  certificate: ClientCertificate;
  /** The CA that signed the server's certificate, when it is not a public one (e.g. `.rookery/data/certs/ca.crt`). */
  ca?: string | Buffer | Array<string | Buffer>;
  /** The TLS server name to expect, when it is not the URL's host. */
  servername?: string;
  /** Operators' certificates reach every tenant: name the one this store works in. */
  tenant?: string;
  conventions?: Partial<DocumentConventions>;
}

export interface TwoFactorOptions {
  /** How long the session lasts (default 60, at most a week). */
  sessionDurationMinutes?: number;
  /**
   * `certificate` (default): every client presenting this certificate may use the session.
   * `store`: only this DocumentStore (the server's browser binding: a cookie this store keeps and sends).
   */
  binding?: 'certificate' | 'store';
}

export class DocumentStore {
  readonly url: URL;
  readonly database: string;
  readonly conventions: DocumentConventions;
  private readonly tls: TlsClientOptions;
  private readonly databasePath: string;
  private state: {
    executor: RequestExecutor;
    hilo: MultiTypeHiLoIdGenerator;
    aggressive: AggressiveCaching;
    subscriptions: DocumentSubscriptions;
  } | null = null;
  private changesConnection: DatabaseChanges | null = null;
  private closed = false;

  constructor(options: DocumentStoreOptions) {
    this.url = new URL(options.url);
    if (this.url.protocol !== 'https:' && this.url.protocol !== 'http:') {
      throw clientError('InvalidArgument', `The store's url must be https://…, got ${options.url}`);
    }
    this.database = options.database;
    this.conventions = { ...DEFAULT_CONVENTIONS, ...options.conventions };
    this.tls = tlsClientOptions(this.url, options.certificate, options.ca, options.servername);
    const prefix = options.tenant === undefined ? '' : `/tenants/${encodeURIComponent(options.tenant)}`;
    this.databasePath = `${prefix}/databases/${encodeURIComponent(options.database)}`;
  }

  /** Creates the connection pool; call once before use (returns the store, for chaining). */
  initialize(): this {
    if (this.closed) throw clientError('ClientClosed', 'The document store is closed');
    if (this.state !== null) return this;
    const cache = new HttpCache(this.conventions.maxHttpCacheBytes);
    let aggressive: AggressiveCaching | null = null;
    const executor = new RequestExecutor({
      baseUrl: this.url,
      tls: this.tls,
      cache,
      retry: this.conventions,
      aggressiveCacheReady: () => aggressive?.ready === true,
    });
    aggressive = new AggressiveCaching(cache, () => this.changes());
    this.state = {
      executor,
      hilo: new MultiTypeHiLoIdGenerator(async (tag, last) => {
        const query = new URLSearchParams({ tag });
        if (last !== null) {
          query.set('lastBatchSize', String(last.size));
          query.set('lastRangeAt', last.fetchedAt.toISOString());
        }
        const { value } = await executor.json<unknown>({
          method: 'GET',
          path: `${this.databasePath}/hilo/next?${query}`,
        });
        return parseResponse(HiLoResponseSchema, value, 'HiLo range');
      }),
      aggressive,
      subscriptions: new DocumentSubscriptions({
        executor,
        databasePath: this.databasePath,
        socketOptions: (path) => this.socketOptions(path),
        reconnect: {
          minDelayMs: this.conventions.reconnectMinDelayMs,
          maxDelayMs: this.conventions.reconnectMaxDelayMs,
        },
      }),
    };
    return this;
  }

  openSession(options: SessionOptions = {}): DocumentSession {
    return new DocumentSession(this.sessionContext(), options);
  }

  /**
   * Until the handle is disposed, reads (loads, queries) younger than `ms` are answered from the cache
   * without a request, unless a change was notified since (then they revalidate with their ETag).
   * `using _ = store.aggressivelyCacheFor(60_000)` or `handle.dispose()`.
   */
  aggressivelyCacheFor(ms: number): AggressiveCacheHandle {
    return this.live().aggressive.enable(ms);
  }

  /** The changes feed of this store's database (one connection, shared). */
  changes(): DatabaseChanges {
    this.live();
    if (this.changesConnection === null) {
      this.changesConnection = new DatabaseChanges({
        socket: () => this.socketOptions(`${this.databasePath}/changes`),
        reconnectMinDelayMs: this.conventions.reconnectMinDelayMs,
        reconnectMaxDelayMs: this.conventions.reconnectMaxDelayMs,
        onClose: () => {
          this.changesConnection = null;
        },
      });
    }
    return this.changesConnection;
  }

  get subscriptions(): DocumentSubscriptions {
    return this.live().subscriptions;
  }

  /** Requests sent, 304s, answers served from the cache without a request, retries. */
  get requestCounters(): Readonly<RequestCounters> {
    return this.live().executor.counters;
  }

  /** @internal The executor, for requests the sessions do not cover (tests, tools). */
  get requestExecutor(): RequestExecutor {
    return this.live().executor;
  }

  /**
   * Opens the two-factor session a person's certificate needs (`POST /auth/2fa`) with a code from their
   * authenticator app. Without it their requests fail with TwoFactorRequiredError.
   */
  async authenticateTwoFactor(code: string, options: TwoFactorOptions = {}): Promise<{ expiresAt: Date }> {
    const executor = this.live().executor;
    const binding = options.binding ?? 'certificate';
    const { value, response } = await executor.json<unknown>({
      method: 'POST',
      path: '/auth/2fa',
      body: JSON.stringify({
        code,
        minutes: options.sessionDurationMinutes ?? 60,
        binding: binding === 'store' ? 'browser' : 'certificate',
      }),
      // A code is single-use: sending it twice fails the second time.
      idempotent: false,
    });
    const session = parseResponse(TwoFactorSessionSchema, value, 'two-factor session');
    if (binding === 'store') {
      const setCookie = response.headers['set-cookie'];
      const cookie = (Array.isArray(setCookie) ? setCookie[0] : setCookie)?.split(';', 1)[0];
      if (cookie === undefined)
        throw clientError('UnexpectedResponse', 'The two-factor session came without its cookie');
      executor.cookie = cookie;
    }
    return { expiresAt: new Date(session.ExpiresAt) };
  }

  /** Streams documents into the database through bulk_insert (thousands per transaction). */
  bulkInsert(items: Iterable<BulkInsertItem> | AsyncIterable<BulkInsertItem>): Promise<BulkInsertResult> {
    return bulkInsert(this.live().executor, this.databasePath, items);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.changesConnection?.close();
    await this.state?.subscriptions.closeAll();
    await this.state?.executor.close();
  }

  private live() {
    if (this.state === null) {
      throw clientError(
        this.closed ? 'ClientClosed' : 'InvalidArgument',
        this.closed ? 'The document store is closed' : 'Call store.initialize() before using the store',
      );
    }
    if (this.closed) throw clientError('ClientClosed', 'The document store is closed');
    return this.state;
  }

  private sessionContext(): SessionContext {
    const state = this.live();
    return {
      executor: state.executor,
      conventions: this.conventions,
      databasePath: this.databasePath,
      generateId: (tag) => state.hilo.nextId(tag),
      aggressiveCacheMs: () => state.aggressive.durationMs,
      startAggressiveCaching: () => state.aggressive.start(),
    };
  }

  private socketOptions(path: string): LiveSocketOptions {
    const cookie = this.state?.executor.cookie ?? null;
    return {
      url: new URL(path, this.url),
      tls: this.tls,
      headers: cookie === null ? {} : { cookie },
    };
  }
}
