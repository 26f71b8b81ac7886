// One RavenDB TCP connection of a subscription worker, from its TLS handshake to its end:
// 1. negotiation: the worker's TcpConnectionHeaderMessage (Operation "Subscription", a protocol version);
//    the version is agreed (TcpVersionMismatch names the one Rookery offers instead), and the caller is
//    checked exactly as an HTTPS request is (admission.ts: the certificate's principal and revocation, a
//    person's two-factor session, the database's authorisation): `Ok`, or `AuthorizationFailed` saying why;
// 2. the worker's options (SubscriptionConnectionOptions): the subscription and its strategy, admitted as
//    an upgrade to `…/subscriptions/{name}/connect` is (the tenant's rate, one of its WebSockets);
// 3. Rookery's subscription WebSocket to the tenant (tenant-subscription.ts), carried by subscription-bridge.ts.
// Everything before the options must arrive within the negotiation timeout, so a connection that says nothing
// (or says it slowly) is cut; each message of the worker is held to a size limit (json-frames.ts).
import type { TLSSocket } from 'node:tls';
import {
  RAVEN_SUBSCRIPTION_VERSIONS,
  RAVEN_TCP_SUBSCRIPTION,
  type RavenSubscriptionOptions,
  RavenSubscriptionOptionsSchema,
  type RavenTcpHeaderResponse,
  RavenTcpHeaderSchema,
  RookeryError,
  SubscriptionNameSchema,
} from '@rookery/protocol';
import type { Logger } from 'pino';
import type { Admission } from '../admission.js';
import { authorize } from '../authorize.js';
import type { LiveSockets } from '../live-sockets.js';
import type { UsageMeter } from '../metering.js';
import type { GatewayMetrics } from '../metrics.js';
import type { Resolved } from '../principals.js';
import { gatewayError, unexpectedFailure } from '../refusal.js';
import { classifyTenantRoute, type TenantRoute } from '../route-access.js';
import type { TenantRouter } from '../tenant-router.js';
import { endThenDestroy } from '../upgrade-proxy.js';
import { ravenAnswerFor } from './answers.js';
import { ClientMessages, isWorkerLeft, writeMessage } from './client-messages.js';
import { SubscriptionBridge } from './subscription-bridge.js';
import { openTenantSubscription } from './tenant-subscription.js';

export interface RavenTcpLimits {
  /** From the TLS handshake's end until the worker's options: longer, and the connection is cut. */
  negotiationTimeoutMs: number;
  /** The largest message a worker may send (its header, options, acknowledgements are a few hundred bytes). */
  maxMessageBytes: number;
  /** Most documents per batch, whatever MaxDocsPerBatch asks (Rookery's subscription takes at most 10,000). */
  maxBatchSize: number;
}

export const DEFAULT_RAVEN_TCP_LIMITS: RavenTcpLimits = {
  negotiationTimeoutMs: 10_000,
  maxMessageBytes: 64 * 1024,
  maxBatchSize: 10_000,
};

export interface RavenTcpDeps {
  admission: Admission;
  router: TenantRouter;
  live: LiveSockets;
  meter: UsageMeter;
  metrics: GatewayMetrics;
  log: Logger;
  nextRequestId(): string;
  limits: RavenTcpLimits;
}

/** Serves one connection; resolves when it is handed to its bridge, or has been answered and ended. */
export async function serveRavenTcp(socket: TLSSocket, deps: RavenTcpDeps): Promise<void> {
  const requestId = deps.nextRequestId();
  const messages = new ClientMessages(socket, deps.limits.maxMessageBytes);
  const deadline = setTimeout(() => {
    messages.fail(
      gatewayError(
        'RavenTcpNegotiationTimeout',
        `A RavenDB TCP connection must send its header and its subscription options within ${deps.limits.negotiationTimeoutMs} ms (ROOKERY_RAVEN_TCP_NEGOTIATION_TIMEOUT_MS).`,
        { limit: 'ravenTcpNegotiationTimeoutMs', value: deps.limits.negotiationTimeoutMs },
      ),
    );
  }, deps.limits.negotiationTimeoutMs);
  deadline.unref();
  try {
    const agreed = await negotiate(socket, messages, deps);
    if (!agreed) return;
    const options = await messages.next(RavenSubscriptionOptionsSchema, 'subscription options message');
    clearTimeout(deadline);
    await subscribe(socket, messages, agreed, options, requestId, deps);
  } catch (error) {
    if (isWorkerLeft(error)) return void socket.destroy();
    writeMessage(socket, answerFor(error, requestId, deps.log));
    endThenDestroy(socket);
  } finally {
    clearTimeout(deadline);
  }
}

interface Agreed {
  caller: Resolved;
  sessionEndsAt: number | null;
  database: string;
}

/**
 * The header exchange: versions until one is agreed, then the caller's checks. Null when the worker was
 * refused (AuthorizationFailed, or no version in common) and the connection ended.
 */
async function negotiate(
  socket: TLSSocket,
  messages: ClientMessages,
  deps: RavenTcpDeps,
): Promise<Agreed | null> {
  for (;;) {
    const header = await messages.next(RavenTcpHeaderSchema, 'TcpConnectionHeaderMessage');
    const version = header.OperationVersion;
    // The worker gives up on a version it cannot go below (OUT_OF_RANGE -1) or drops the connection (-2).
    if (header.Operation === 'Drop' || version < 0) {
      endThenDestroy(socket);
      return null;
    }
    if (header.Operation !== RAVEN_TCP_SUBSCRIPTION) {
      answer(socket, {
        Status: 'AuthorizationFailed',
        Version: version,
        Message: `Rookery serves only subscription workers (Operation "Subscription") on this port, not "${header.Operation}".`,
      });
      endThenDestroy(socket);
      return null;
    }
    if (!(RAVEN_SUBSCRIPTION_VERSIONS as readonly number[]).includes(version)) {
      // The newest version below the one proposed, which the worker then proposes; none: -1, it gives up.
      const offered = RAVEN_SUBSCRIPTION_VERSIONS.find((v) => v < version) ?? -1;
      answer(socket, {
        Status: 'TcpVersionMismatch',
        Version: offered,
        Message: `Rookery speaks subscription protocol versions ${RAVEN_SUBSCRIPTION_VERSIONS.join(', ')}, not ${version}.`,
      });
      continue;
    }
    const refusal = await checkCaller(socket, header.DatabaseName ?? null, deps).catch((error: unknown) => {
      if (error instanceof RookeryError) return error;
      throw error;
    });
    if (refusal instanceof RookeryError) {
      answer(socket, {
        Status: 'AuthorizationFailed',
        Version: version,
        Message: `${refusal.code}: ${refusal.message}`,
      });
      endThenDestroy(socket);
      return null;
    }
    // No compression: the client then writes and reads plain JSON (it never compresses unless told to).
    answer(socket, { Status: 'Ok', Version: version, LicensedFeatures: { DataCompression: false } });
    return refusal;
  }
}

function answer(socket: TLSSocket, response: RavenTcpHeaderResponse): void {
  writeMessage(socket, response);
}

/** The HTTPS path's checks, in its order (gateway.ts, upgrade.ts): who, their second factor, the database. */
async function checkCaller(socket: TLSSocket, database: string | null, deps: RavenTcpDeps): Promise<Agreed> {
  const caller = await deps.admission.identify(socket);
  // TCP carries no cookie: a person needs a two-factor session bound to the certificate.
  const sessionEndsAt = await deps.admission.requireSecondFactor(caller, undefined);
  if (!database) throw gatewayError('InvalidRequest', 'The header names no DatabaseName.');
  const route = routeOf(`/databases/${encodeURIComponent(database)}/subscriptions`);
  const decision = authorize(caller.principal, route);
  if (!decision.ok) throw gatewayError(decision.code, decision.message);
  return { caller, sessionEndsAt, database };
}

async function subscribe(
  socket: TLSSocket,
  messages: ClientMessages,
  agreed: Agreed,
  options: RavenSubscriptionOptions,
  requestId: string,
  deps: RavenTcpDeps,
): Promise<void> {
  const name = SubscriptionNameSchema.safeParse(options.SubscriptionName);
  // A name Rookery could not have given a subscription names none.
  if (!name.success) {
    throw gatewayError('SubscriptionNotFound', `There is no subscription ${options.SubscriptionName}.`);
  }
  if (options.Strategy === 'Concurrent') {
    throw gatewayError(
      'InvalidRequest',
      'Rookery serves one worker per subscription: the Concurrent strategy is not supported (use OpenIfFree, TakeOver or WaitForFree).',
    );
  }
  if (options.CloseWhenNoDocsLeft) {
    throw gatewayError(
      'InvalidRequest',
      'CloseWhenNoDocsLeft is not supported: a Rookery subscription waits for new documents; dispose the worker when done.',
    );
  }
  const query = new URLSearchParams({
    strategy: options.Strategy ?? 'OpenIfFree',
    batchSize: String(Math.min(options.MaxDocsPerBatch ?? 4096, deps.limits.maxBatchSize)),
  });
  const route = routeOf(
    `/databases/${encodeURIComponent(agreed.database)}/subscriptions/${encodeURIComponent(name.data)}/connect?${query}`,
  );
  const tenant = await deps.admission.admit(agreed.caller.principal, route);
  // Held before the tenant is woken, as an upgrade's is: waiting connections count against the limit too.
  const release = deps.admission.holdLiveConnection(tenant.id, 'websocket');
  let bridge: SubscriptionBridge;
  try {
    const outcome = await openTenantSubscription(deps.router, tenant.id, route.upstreamPath, requestId);
    // One request to the tenant, opened or answered, as a WebSocket upgrade is (upgrade.ts); the bytes that
    // follow are metered as they flow (live-sockets.ts).
    deps.metrics.tenantRequest(tenant.id);
    deps.meter.record(tenant.id, { bytesIn: 0, bytesOut: 0, workUnits: 1 });
    if (!outcome.opened) throw new TenantAnswered(outcome.refusal.code, outcome.refusal.message);
    bridge = new SubscriptionBridge(socket, messages, outcome.socket);
  } catch (error) {
    release();
    throw error;
  }
  bridge.onClose(release);
  deps.live.add({
    tenantId: tenant.id,
    thumbprint: agreed.caller.certificate.thumbprint,
    route,
    sessionEndsAt: agreed.sessionEndsAt,
    tunnel: bridge,
    requestId,
  });
}

/** The tenant refused the subscription's upgrade (404 SubscriptionNotFound, 409 SubscriptionInUse, …). */
class TenantAnswered extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function answerFor(error: unknown, requestId: string, log: Logger) {
  if (error instanceof TenantAnswered || error instanceof RookeryError) {
    return ravenAnswerFor(error.code, error.message);
  }
  const { answer, bug } = unexpectedFailure(error);
  if (bug) log.error({ err: error, reqId: requestId }, 'RavenDB TCP connection failed');
  return ravenAnswerFor(answer.code, answer.message);
}

function routeOf(url: string): TenantRoute {
  const route = classifyTenantRoute('GET', url);
  if (!route)
    throw gatewayError('InvalidRequest', `The database or subscription name cannot be used: ${url}.`);
  return route;
}
