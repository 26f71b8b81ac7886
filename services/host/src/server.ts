// The host's internal HTTP API, for the gateway and operators on this machine: wake a tenant (its socket),
// read its stats without waking it, list, stop and purge (delete) tenants, Prometheus metrics. Every request needs the
// shared token; every error is problem+json with a stable code.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { SecureContextOptions } from 'node:tls';
import {
  type HostPurgeAnswer,
  type HostStopAnswer,
  type HostTenantList,
  type HostTenantStats,
  type HostWakeAnswer,
  INTERNAL_TOKEN_HEADER,
  RookeryError,
  TenantIdSchema,
} from '@rookery/protocol';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  LogController,
} from 'fastify';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { TenantOwnership } from './ownership.js';
import type { TenantSupervisor } from './supervisor.js';
import type { TenantMoves } from './tenant-moves.js';

const TenantParamsSchema = z.object({
  tenantId: TenantIdSchema,
});

export interface HostServerOptions {
  supervisor: TenantSupervisor;
  internalToken: string;
  logger: Logger;
  /**
   * Fleet mode: wake and stats of a tenant this host does not own answer 421 TenantNotHere before the
   * tenant is started or its files read. Stop and purge are not checked: they are how a tenant's old
   * copy is cleared off a host that no longer owns it.
   */
  ownership?: Pick<TenantOwnership, 'confirm' | 'forget'>;
  /**
   * Fleet mode: the tenants' doors (tenant-moves.ts). Wake and stats (with their ownership check) wait
   * while the tenant is being moved to another host, then answer as the store says: 421 once it moved.
   */
  moves?: Pick<TenantMoves, 'admit'>;
}

/** Sends a problem+json answer; `retryAfterSeconds` in the details also becomes a Retry-After header. */
function sendProblem(reply: FastifyReply, status: number, problem: Record<string, unknown>): FastifyReply {
  const retryAfter = problem.retryAfterSeconds;
  if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter));
  return reply.code(status).type('application/problem+json').send(JSON.stringify(problem));
}

function sendError(reply: FastifyReply, error: RookeryError): FastifyReply {
  return sendProblem(reply, error.status, error.toProblem());
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Whether a request's token header is the internal token, compared as digests: constant time whatever the lengths. */
export function internalTokenCheck(token: string): (given: unknown) => boolean {
  const expected = digest(token);
  return (given) => typeof given === 'string' && timingSafeEqual(digest(given), expected);
}

/**
 * The 401 of a request without the internal token. Not a RookeryError code: only Rookery's own services
 * talk to the host, and this is their mistake.
 */
export const INTERNAL_TOKEN_PROBLEM = {
  type: 'https://rookery.dev/errors/InternalTokenRequired',
  title: 'Internal token required',
  status: 401,
  detail: `Send the host's internal token in the ${INTERNAL_TOKEN_HEADER} header (ROOKERY_INTERNAL_TOKEN)`,
  code: 'InternalTokenRequired',
} as const;

/** Builds the internal API (not yet listening) on plain HTTP. */
export function buildHostServer(options: HostServerOptions): FastifyInstance {
  return buildHostApi(options, null);
}

/**
 * The internal API's routes on a server of their own: plain HTTP (buildHostServer), or HTTPS with the
 * given TLS settings (a fleet host's relay port, relay-server.ts, serves the same routes to other machines).
 */
export function buildHostApi(
  options: HostServerOptions,
  https: SecureContextOptions | null,
): FastifyInstance {
  const { supervisor } = options;
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    ...(https && { https }),
  }) as unknown as FastifyInstance;
  const tokenMatches = internalTokenCheck(options.internalToken);

  app.addHook('onRequest', async (request, reply) => {
    if (tokenMatches(request.headers[INTERNAL_TOKEN_HEADER])) return;
    return sendProblem(reply, 401, { ...INTERNAL_TOKEN_PROBLEM });
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof RookeryError) return sendError(reply, error);
    const status = error.statusCode;
    if (status !== undefined && status >= 400 && status < 500)
      return sendError(reply, new RookeryError('InvalidRequest', error.message));
    request.log.error({ err: error, url: request.url }, 'host request failed');
    return sendError(
      reply,
      new RookeryError('InternalError', 'Something went wrong on the host; the request may be retried'),
    );
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(
      reply,
      new RookeryError(
        'RouteNotFound',
        `There is no route ${request.method} ${request.url.split('?')[0]} on the host; see services/host/README.md`,
      ),
    ),
  );

  const tenantIdOf = (params: unknown): string => {
    const parsed = TenantParamsSchema.safeParse(params);
    if (!parsed.success) {
      throw new RookeryError(
        'InvalidTenantId',
        `The tenant id is not valid: ${parsed.error.issues[0]!.message}`,
      );
    }
    return parsed.data.tenantId;
  };

  // Every answer is built to its @rookery/protocol type (host.ts), which the gateway and the worker parse.
  const { ownership, moves } = options;
  /** The ownership check, then `then`, through the tenant's door when there is one (fleet mode). */
  const owned = <T>(tenantId: string, then: () => Promise<T>): Promise<T> => {
    const open = async () => {
      await ownership?.confirm(tenantId);
      return then();
    };
    return moves ? moves.admit(tenantId, open) : open();
  };
  app.post('/tenants/:tenantId/wake', async (request): Promise<HostWakeAnswer> => {
    const tenantId = tenantIdOf(request.params);
    return owned(tenantId, () => supervisor.wake(tenantId));
  });

  app.post('/tenants/:tenantId/stop', async (request): Promise<HostStopAnswer> => {
    const tenantId = tenantIdOf(request.params);
    ownership?.forget(tenantId);
    const wasRunning = await supervisor.stop(tenantId);
    return { tenantId, state: supervisor.info(tenantId).state, wasRunning };
  });

  // The worker's tenant-purge job: a deleted tenant's process and local files go. Idempotent, so
  // the job's retries (and a purge of a tenant this host never ran) answer 200, never 404.
  app.delete('/tenants/:tenantId', async (request): Promise<HostPurgeAnswer> => {
    const tenantId = tenantIdOf(request.params);
    ownership?.forget(tenantId);
    return supervisor.purge(tenantId);
  });

  app.get('/tenants/:tenantId/stats', async (request): Promise<HostTenantStats> => {
    const tenantId = tenantIdOf(request.params);
    return owned(tenantId, () => supervisor.stats(tenantId));
  });

  app.get('/tenants', async (): Promise<HostTenantList> => ({ tenants: supervisor.list() }));

  app.get('/metrics', async (_request, reply) =>
    reply.type(supervisor.metrics.contentType).send(await supervisor.metrics.text()),
  );

  return app;
}
