// The control plane's HTTP API: tenants, principals, certificates, TOTP and
// database records, for operators and tenant admins. A fastify app that is
// never listened on by itself: its host (the gateway) authenticates the
// client, then hands each /control request to `serve` with the caller's
// principal. The API decides what that principal may do (scope.ts).
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { ControlStore } from '@rookery/control-store';
import type { JobQueue } from '@rookery/jobs';
import type { CertificateAuthority } from '@rookery/pki';
import {
  type DeclaredRoute,
  jsonSerializer,
  type OpenApiFragment,
  openApiPaths,
  PROBLEM_CONTENT_TYPE,
  RookeryError,
  type RookeryJobTypes,
  requestPartValidator,
  rookeryErrorFromThrown,
} from '@rookery/protocol';
import Fastify, { type FastifyBaseLogger, type FastifyReply, LogController } from 'fastify';
import { bindCaller, boundCaller, type ControlCaller } from './caller.js';
import type { ControlContext } from './context.js';
import { certificateRoutes } from './routes/certificates.js';
import { databaseRoutes } from './routes/databases.js';
import { hostRoutes } from './routes/hosts.js';
import { jobRoutes } from './routes/jobs.js';
import { principalRoutes } from './routes/principals.js';
import { tenantRoutes } from './routes/tenants.js';

export interface ControlApiOptions {
  store: ControlStore;
  ca: CertificateAuthority;
  /** Seals TOTP secrets at enrolment. */
  masterKey: Buffer;
  logger: FastifyBaseLogger;
  /**
   * The worker fleet's job queue (openJobQueue with ROOKERY_JOB_TYPES, on the same data directory
   * or database as the store). Without it the job routes answer 503 JobQueueUnavailable.
   */
  jobs?: JobQueue<RookeryJobTypes> | null;
}

/** What the host meters of an answer. */
export interface ControlAnswer {
  status: number;
  /** The body's bytes. */
  bytesOut: number;
}

export interface ControlApi {
  /** Every route served, with the schema it declares (the gateway's isolation test walks them all). */
  readonly routes: readonly (DeclaredRoute & { method: string })[];
  /** The routes' part of Rookery's OpenAPI document (the gateway serves it at /openapi.json). */
  readonly openApi: OpenApiFragment;
  /** Answers one request as `caller`, who the host has already authenticated; resolves once the answer is sent. */
  serve(
    request: http.IncomingMessage,
    response: http.ServerResponse,
    caller: ControlCaller,
  ): Promise<ControlAnswer>;
  close(): Promise<void>;
}

/** Every body here is a small JSON object. */
const MAX_BODY_BYTES = 64 * 1024;

export async function buildControlApi(options: ControlApiOptions): Promise<ControlApi> {
  const app = Fastify({
    loggerInstance: options.logger,
    bodyLimit: MAX_BODY_BYTES,
    // Changes are logged by the onResponse hook below, with the caller; reads are not.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (request) => boundCaller(request)?.requestId ?? randomUUID(),
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
  });
  app.removeContentTypeParser('text/plain');
  // Routes declare their parts with documented() for the OpenAPI document, and parse them in the handler: the
  // caller's rights are checked first, so that a caller without them learns nothing from a 400 about shapes.
  app.setValidatorCompiler(requestPartValidator);
  app.setSerializerCompiler(jsonSerializer);
  app.setErrorHandler((error, request, reply) => {
    const problem = rookeryErrorFromThrown(error, { maxBodyBytes: MAX_BODY_BYTES });
    if (problem.status >= 500) request.log.error({ err: error }, 'control request failed');
    return sendProblem(reply, problem);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      new RookeryError(
        'RouteNotFound',
        `There is no route ${request.method} ${request.url.split('?', 1)[0]}; the control API's routes are listed in services/control/README.md.`,
      ),
    ),
  );
  // An audit line for every change: who did what to which tenant, and how it ended.
  app.addHook('onResponse', async (request, reply) => {
    if (request.method === 'GET' || request.method === 'HEAD') return;
    request.log.info(
      {
        caller: boundCaller(request.raw)?.principal.id,
        method: request.method,
        url: request.url,
        status: reply.statusCode,
      },
      'control change',
    );
  });

  // Every answer here is a string (JSON) when it is sent, so its size is known for the host's metering.
  const bodyBytes = new WeakMap<http.IncomingMessage, number>();
  app.addHook('onSend', async (request, _reply, payload) => {
    if (typeof payload === 'string') bodyBytes.set(request.raw, Buffer.byteLength(payload));
    return payload;
  });

  const routes: (DeclaredRoute & { method: string })[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat())
      if (method !== 'HEAD') routes.push({ method, url: route.url, schema: route.schema });
  });

  const context: ControlContext = {
    store: options.store,
    ca: options.ca,
    masterKey: options.masterKey,
    jobs: options.jobs ?? null,
  };
  tenantRoutes(app, context);
  hostRoutes(app, context);
  // The tenant-scoped routes, twice: /control/… acts on the caller's own tenant,
  // /control/tenants/{id}/… on the named one (operators, or a tenant admin naming its own).
  for (const prefix of ['/control', '/control/tenants/:tenantId']) {
    await app.register(
      async (scoped) => {
        principalRoutes(scoped, context);
        certificateRoutes(scoped, context);
        databaseRoutes(scoped, context);
        jobRoutes(scoped, context);
      },
      { prefix },
    );
  }
  await app.ready();

  return {
    routes,
    openApi: openApiPaths(routes, 'Control'),
    serve(request, response, caller) {
      bindCaller(request, caller);
      const answered = new Promise<ControlAnswer>((resolve) =>
        response.once('close', () =>
          resolve({ status: response.statusCode, bytesOut: bodyBytes.get(request) ?? 0 }),
        ),
      );
      app.routing(request, response);
      return answered;
    },
    close: () => app.close(),
  };
}

function sendProblem(reply: FastifyReply, error: RookeryError): FastifyReply {
  return reply.code(error.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(error.toProblem()));
}
