// Sends every HTTP request of a store: one undici Agent (keep-alive connections presenting the client
// certificate), JSON in and out, problem bodies turned into typed errors, bounded retries (retry-policy.ts),
// and the ETag cache (http-cache.ts): cacheable reads send If-None-Match and a 304 is answered from the
// cache; under aggressive caching a fresh entry is answered without a request at all.
import { Readable } from 'node:stream';
import { Agent, type Dispatcher, request } from 'undici';
import { clientError, type RookeryClientError } from '../errors.js';
import type { TlsClientOptions } from '../tls-options.js';
import { errorFromResponse, retryAfterSeconds } from './error-from-response.js';
import type { HttpCache } from './http-cache.js';
import { type Failure, type RetryOptions, retryDelay } from './retry-policy.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';
export type Headers = Record<string, string | string[] | undefined>;

export interface RequestOptions {
  method: HttpMethod;
  /** Path and query string, from the root of the server (`/databases/shop/docs?id=…`). */
  path: string;
  /** The body as sent (JSON text unless contentType says otherwise), or an iterable streamed as it is read. */
  body?: string | AsyncIterable<Buffer | string>;
  contentType?: string;
  headers?: Record<string, string>;
  /** Keep the answer in the HTTP cache, keyed by method, path and body, and revalidate it with its ETag. */
  cache?: boolean;
  /** Under aggressive caching: answer from the cache without a request if validated within this many ms. */
  aggressiveCacheMs?: number;
  /** Whether sending it twice does no harm (default: every method but POST). */
  idempotent?: boolean;
  signal?: AbortSignal;
}

/** Where an answer came from. */
export type ResponseSource = 'network' | 'not-modified' | 'aggressive-cache';

export interface ExecutedResponse {
  status: number;
  headers: Headers;
  body: string;
  source: ResponseSource;
}

export interface OpenedStream {
  status: number;
  headers: Headers;
  body: Dispatcher.ResponseData['body'];
}

/** What the store's requests did: tests and benchmarks read these to see what reached the network. */
export interface RequestCounters {
  /** Requests that reached the network (each retry counts). */
  sent: number;
  /** Of those, answered 304 and served from the cache. */
  notModified: number;
  /** Answered from the cache without any request (aggressive caching). */
  servedFromCache: number;
  /** Attempts that were retries of a failed one. */
  retries: number;
}

export interface ExecutorOptions {
  baseUrl: URL;
  tls: TlsClientOptions;
  cache: HttpCache;
  retry: RetryOptions;
  /** Whether aggressive caching may serve without a request now (its changes connection is up). */
  aggressiveCacheReady: () => boolean;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class RequestExecutor {
  readonly agent: Agent;
  readonly counters: RequestCounters = { sent: 0, notModified: 0, servedFromCache: 0, retries: 0 };
  /** A browser-bound two-factor session's cookie, sent with every request of this store once opened. */
  cookie: string | null = null;
  private closed = false;

  constructor(private readonly options: ExecutorOptions) {
    this.agent = new Agent({ connect: { ...options.tls }, keepAliveTimeout: 30_000 });
  }

  get cache(): HttpCache {
    return this.options.cache;
  }

  urlFor(path: string): URL {
    return new URL(path, this.options.baseUrl);
  }

  /** Sends a request and reads its whole answer; throws the typed error of a non-2xx answer. */
  async execute(options: RequestOptions): Promise<ExecutedResponse> {
    const cache = this.options.cache;
    const key = options.cache ? cacheKey(options) : null;
    const cached = key === null ? undefined : cache.get(key);
    if (
      cached !== undefined &&
      options.aggressiveCacheMs !== undefined &&
      options.aggressiveCacheMs > 0 &&
      this.options.aggressiveCacheReady() &&
      cache.isFresh(cached, options.aggressiveCacheMs)
    ) {
      this.counters.servedFromCache += 1;
      return { status: 200, headers: { etag: cached.etag }, body: cached.body, source: 'aggressive-cache' };
    }
    // Read before sending: a change notified while the request is in flight leaves the answer suspect.
    const generation = cache.generation;
    const headers =
      cached === undefined ? options.headers : { ...options.headers, 'if-none-match': cached.etag };
    const response = await this.send({ ...options, headers });
    const body = await response.body.text();
    if (response.statusCode === 304 && cached !== undefined) {
      this.counters.notModified += 1;
      cache.confirm(cached, generation);
      return { status: 200, headers: response.headers, body: cached.body, source: 'not-modified' };
    }
    if (response.statusCode >= 400) throw errorFromResponse(response.statusCode, response.headers, body);
    const etag = response.headers.etag;
    if (key !== null && response.statusCode === 200) {
      // An answer without an ETag cannot be revalidated: drop what was kept for it rather than serve it.
      if (typeof etag === 'string') cache.set(key, etag, body, generation);
      else cache.delete(key);
    }
    return { status: response.statusCode, headers: response.headers, body, source: 'network' };
  }

  /** Sends a request and parses its JSON answer. */
  async json<T>(options: RequestOptions): Promise<{ value: T; response: ExecutedResponse }> {
    const response = await this.execute(options);
    try {
      return { value: (response.body === '' ? null : JSON.parse(response.body)) as T, response };
    } catch (error) {
      throw clientError(
        'UnexpectedResponse',
        `${options.method} ${options.path} answered ${response.status} with a body that is not JSON`,
        error,
      );
    }
  }

  /**
   * Sends a request whose answer is read as a stream (NDJSON). Retries apply until the answer's headers
   * arrive; after that the caller owns the body and must consume or destroy it.
   */
  async openStream(options: RequestOptions): Promise<OpenedStream> {
    const response = await this.send(options);
    if (response.statusCode >= 400) {
      const body = await response.body.text();
      throw errorFromResponse(response.statusCode, response.headers, body);
    }
    return { status: response.statusCode, headers: response.headers, body: response.body };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.agent.close();
  }

  /** One request with the retry policy applied; answers with a status that will not be retried. */
  private async send(options: RequestOptions): Promise<Dispatcher.ResponseData> {
    if (this.closed) throw clientError('ClientClosed', 'The document store is closed');
    const idempotent = options.idempotent ?? options.method !== 'POST';
    // A streamed body can be read once: such a request is never sent twice.
    const resendable = options.body === undefined || typeof options.body === 'string';
    let waitedMs = 0;
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1) this.counters.retries += 1;
      this.counters.sent += 1;
      let failure: Failure;
      let surfaced: RookeryClientError;
      try {
        const response = await request(this.urlFor(options.path), {
          method: options.method,
          headers: this.headersFor(options),
          body: typeof options.body === 'object' ? Readable.from(options.body) : options.body,
          dispatcher: this.agent,
          signal: options.signal,
        });
        if (response.statusCode !== 429 && response.statusCode !== 503) return response;
        const text = await response.body.text();
        surfaced = errorFromResponse(response.statusCode, response.headers, text);
        failure = {
          kind: 'status',
          status: response.statusCode,
          code: surfaced.code,
          retryAfterSeconds: retryAfterSeconds(response.headers['retry-after']),
        };
      } catch (error) {
        if (options.signal?.aborted) throw error;
        failure = { kind: 'network' };
        surfaced = clientError(
          'ConnectionFailed',
          `${options.method} ${options.path} got no answer from ${this.options.baseUrl.origin}: ${(error as Error).message}`,
          error,
        );
      }
      const delay = resendable
        ? retryDelay({ failure, idempotent, attempt, waitedMs }, this.options.retry)
        : null;
      if (delay === null) throw surfaced;
      await sleep(delay);
      waitedMs += delay;
    }
  }

  private headersFor(options: RequestOptions): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (options.body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
    if (this.cookie !== null) headers.cookie = this.cookie;
    return headers;
  }
}

/** Requests with the same method, path and body get the same answer: that is the cache's key. */
export function cacheKey(options: Pick<RequestOptions, 'method' | 'path' | 'body'>): string {
  const body = typeof options.body === 'string' ? options.body : '';
  return `${options.method} ${options.path}\n${body}`;
}
