// How a job reaches a tenant: the host's internal API wakes it and answers its Unix socket, and the
// job speaks HTTP to the tenant over that socket, as the gateway does. The tenant process is the
// single writer of its databases; a job asks it to do the work and never opens the files itself.
//
// node:http rather than undici: it speaks both TCP (the host) and Unix sockets (the tenant) with
// one small function, and the worker needs no new dependency for it.
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type HostPurgeAnswer,
  HostPurgeAnswerSchema,
  HostWakeAnswerSchema,
  INTERNAL_TOKEN_HEADER,
  ProblemSchema,
  parseHostAnswer,
  RookeryError,
} from '@rookery/protocol';

/** An answer body is a small JSON object; anything bigger is not what we asked for. */
const MAX_ANSWER_BYTES = 1024 * 1024;
/** 503s waited out before giving up: a start that takes longer is the attempt's failure, and the queue retries it. */
const MAX_RETRY_WAITS = 30;
/** Bounds a Retry-After, so a bad header cannot park a job for its whole lease. */
const MAX_RETRY_AFTER_SECONDS = 30;

export type Target = { url: string } | { socketPath: string };

export interface JsonAnswer {
  status: number;
  retryAfterSeconds: number | null;
  body: unknown;
}

/** One JSON request; answers whatever status came back (the caller decides what is an error). */
export function callJson(
  target: Target,
  method: string,
  requestPath: string,
  options: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<JsonAnswer> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const where =
    'url' in target
      ? (() => {
          const url = new URL(target.url);
          return { host: url.hostname, port: url.port || 80 };
        })()
      : { socketPath: target.socketPath };
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        ...where,
        method,
        path: requestPath,
        signal: options.signal,
        headers: {
          accept: 'application/json',
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          ...options.headers,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES)
            response.destroy(new Error(`the answer to ${requestPath} is too large`));
          else chunks.push(chunk);
        });
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = null;
          try {
            body = text ? JSON.parse(text) : null;
          } catch {
            body = text; // reported as it came, in the error that follows
          }
          const retryAfter = Number(response.headers['retry-after']);
          resolve({
            status: response.statusCode ?? 0,
            retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : null,
            body,
          });
        });
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

/**
 * Calls until the answer is not a 503, waiting the Retry-After it gives (a tenant starting, a
 * database closing): those are "ask again", not failures. Bounded, and stops when the job's
 * signal aborts.
 */
export async function callJsonPatiently(
  call: () => Promise<JsonAnswer>,
  signal?: AbortSignal,
): Promise<JsonAnswer> {
  for (let waits = 0; ; waits++) {
    const answer = await call();
    if (answer.status !== 503 || waits >= MAX_RETRY_WAITS) return answer;
    const seconds = Math.min(answer.retryAfterSeconds ?? 1, MAX_RETRY_AFTER_SECONDS);
    await sleep(seconds * 1000, undefined, { signal });
  }
}

/** The error an answer that is not `expected` stands for: the service's own problem when it sent one. */
export function answerError(answer: JsonAnswer, what: string): RookeryError {
  const problem = ProblemSchema.safeParse(answer.body);
  if (problem.success) return RookeryError.fromProblem(problem.data);
  return new RookeryError(
    'InternalError',
    `${what} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}`,
  );
}

/** The host's internal API, with the token it requires. */
export interface HostApi {
  url: string;
  token: string;
}

/**
 * The host API for a job that needs it, or InternalError naming what cannot be done without the
 * token: every such job fails the same, clear way when ROOKERY_INTERNAL_TOKEN is missing.
 */
export function hostApi(host: { url: string; token: string | undefined }, cannot: string): HostApi {
  if (!host.token) {
    throw new RookeryError('InternalError', `The worker has no ROOKERY_INTERNAL_TOKEN: it cannot ${cannot}.`);
  }
  return { url: host.url, token: host.token };
}

/** One call to the host's internal API, waiting out its 503s. */
function callHost(host: HostApi, method: string, requestPath: string, signal?: AbortSignal) {
  return callJsonPatiently(
    () =>
      callJson({ url: host.url }, method, requestPath, {
        headers: { [INTERNAL_TOKEN_HEADER]: host.token },
        signal,
      }),
    signal,
  );
}

/** The tenant's socket, waking it through the host (a sleeping tenant starts: a known cost of sweeps). */
export async function wakeTenant(host: HostApi, tenantId: string, signal?: AbortSignal): Promise<string> {
  const answer = await callHost(host, 'POST', `/tenants/${encodeURIComponent(tenantId)}/wake`, signal);
  if (answer.status !== 200) throw answerError(answer, `The host (${host.url})`);
  return parseHostAnswer(HostWakeAnswerSchema, answer.body, `POST /tenants/${tenantId}/wake`).socketPath;
}

/** Stops a deleted tenant on the host and deletes its local files (idempotent on the host's side). */
export async function purgeTenantOnHost(
  host: HostApi,
  tenantId: string,
  signal?: AbortSignal,
): Promise<HostPurgeAnswer> {
  const answer = await callHost(host, 'DELETE', `/tenants/${encodeURIComponent(tenantId)}`, signal);
  if (answer.status !== 200) throw answerError(answer, `The host (${host.url})`);
  return parseHostAnswer(HostPurgeAnswerSchema, answer.body, `DELETE /tenants/${tenantId}`);
}
