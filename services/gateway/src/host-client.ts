// The gateway's side of the host's internal API: wake a tenant and learn its
// socket. A woken tenant's socket is remembered, so a request to a running
// tenant costs no round trip to the host; a refused connection forgets it.
// Every answer is parsed with its @rookery/protocol schema (host.ts): an answer
// off the contract is a clear error, never a value read through a cast.
import {
  HostTenantStatsSchema,
  HostWakeAnswerSchema,
  INTERNAL_TOKEN_HEADER,
  isRookeryError,
  ProblemSchema,
  parseHostAnswer,
  RookeryError,
} from '@rookery/protocol';
import { type Dispatcher, request } from 'undici';

export type WakeResult =
  | { ok: true; socketPath: string }
  | { ok: false; status: number; code: string; message: string; retryAfterSeconds: number | null };

export interface TenantStorage {
  bytes: number;
}

export class HostClient {
  private readonly sockets = new Map<string, string>();
  private readonly waking = new Map<string, Promise<WakeResult>>();

  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  /** The socket of a running tenant, waking it if needed; concurrent callers share one wake. */
  async socketOf(tenantId: string): Promise<WakeResult> {
    const known = this.sockets.get(tenantId);
    if (known) return { ok: true, socketPath: known };
    let pending = this.waking.get(tenantId);
    if (!pending) {
      pending = this.wake(tenantId).finally(() => this.waking.delete(tenantId));
      this.waking.set(tenantId, pending);
    }
    return pending;
  }

  forget(tenantId: string): void {
    this.sockets.delete(tenantId);
  }

  /** Bytes the tenant stores, read by the host without waking it; null when the host answers an error. */
  async storageOf(tenantId: string): Promise<TenantStorage | null> {
    return storageFrom(await tenantStats(this.baseUrl, this.token, tenantId));
  }

  /** Names of the databases the tenant stores, read by the host from its files without waking it. */
  async databasesOf(tenantId: string): Promise<{ readable: string[]; unreadable: string[] }> {
    return databasesFrom(await tenantStats(this.baseUrl, this.token, tenantId));
  }

  private async wake(tenantId: string): Promise<WakeResult> {
    const route = `POST /tenants/${tenantId}/wake`;
    const response = await request(`${this.baseUrl}/tenants/${encodeURIComponent(tenantId)}/wake`, {
      method: 'POST',
      headers: { [INTERNAL_TOKEN_HEADER]: this.token },
    });
    let body: unknown;
    try {
      body = await jsonOf(response.body, route);
      if (response.statusCode === 200) {
        const { socketPath } = parseHostAnswer(HostWakeAnswerSchema, body, route);
        this.sockets.set(tenantId, socketPath);
        return { ok: true, socketPath };
      }
    } catch (error) {
      // A host off the contract: the tenant cannot be reached through it (503), and the message says why.
      if (!isRookeryError(error)) throw error;
      return {
        ok: false,
        status: 502,
        code: 'TenantUnavailable',
        message: error.message,
        retryAfterSeconds: null,
      };
    }
    const problem = ProblemSchema.safeParse(body);
    const retryAfter = Number(response.headers['retry-after']);
    return {
      ok: false,
      status: response.statusCode,
      code: problem.success ? problem.data.code : 'TenantUnavailable',
      message: problem.success ? problem.data.detail : `the host answered ${response.statusCode}`,
      retryAfterSeconds: Number.isFinite(retryAfter) ? retryAfter : null,
    };
  }
}

export interface HostAnswer {
  route: string;
  status: number;
  body: unknown;
}

/**
 * `GET /tenants/{id}/stats` of the host at `baseUrl`: its plain API on this machine, or a fleet host's
 * relay port, through a `dispatcher` that presents the gateway's certificate.
 */
export async function tenantStats(
  baseUrl: string,
  token: string,
  tenantId: string,
  dispatcher?: Dispatcher,
): Promise<HostAnswer> {
  const route = `GET /tenants/${tenantId}/stats`;
  const response = await request(`${baseUrl}/tenants/${encodeURIComponent(tenantId)}/stats`, {
    headers: { [INTERNAL_TOKEN_HEADER]: token },
    ...(dispatcher && { dispatcher }),
  });
  return { route, status: response.statusCode, body: await jsonOf(response.body, route) };
}

/** The bytes a stats answer says the tenant stores; null for an error answer. */
export function storageFrom(answer: HostAnswer): TenantStorage | null {
  if (answer.status !== 200) return null;
  return { bytes: parseHostAnswer(HostTenantStatsSchema, answer.body, answer.route).bytesOnDisk };
}

/** The tenant's databases a stats answer names; the host's error for an error answer. */
export function databasesFrom(answer: HostAnswer): { readable: string[]; unreadable: string[] } {
  if (answer.status !== 200) throw errorOf(answer);
  const stats = parseHostAnswer(HostTenantStatsSchema, answer.body, answer.route);
  // Databases whose files the host could read carry their id; the others say why not.
  const readable = stats.databases.filter((d) => 'databaseId' in d).map((d) => d.name);
  const unreadable = stats.databases.filter((d) => !('databaseId' in d)).map((d) => d.name);
  return { readable, unreadable };
}

/** The host's error answer as the error it stands for: its own problem when it sent one. */
function errorOf(answer: HostAnswer): RookeryError {
  const problem = ProblemSchema.safeParse(answer.body);
  if (problem.success) return RookeryError.fromProblem(problem.data);
  return new RookeryError('InternalError', `The host answered ${answer.status} to ${answer.route}`, {
    route: answer.route,
  });
}

/** The answer's JSON; a body that is not JSON is off the contract (every answer of the host is JSON). */
async function jsonOf(body: { text(): Promise<string> }, route: string): Promise<unknown> {
  const text = await body.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new RookeryError(
      'InternalError',
      `The host's answer to ${route} is not JSON (it starts ${JSON.stringify(text.slice(0, 80))})`,
      { route },
    );
  }
}
