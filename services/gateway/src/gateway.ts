// The only public endpoint: HTTPS with client certificates. Each request is
// authenticated (certificate → principal, plus a TOTP session for people),
// authorised against the route, held to its tenant's quotas (admission.ts),
// then streamed to the tenant's container and metered. WebSocket upgrades take
// the same admission and become tunnels to the tenant (upgrade.ts); both they and
// NDJSON streams are held to per-tenant limits (live-limits.ts). Plain
// node:https rather than fastify: the hot path is a proxy whose bodies must
// stay streams, and every microsecond here is added to every request of every
// tenant. /control/… goes to the control plane's API, hosted here in-process
// (see packages/control-api/README.md for why), once the caller is authenticated.

import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { buildControlApi } from '@rookery/control-api';
import type { ControlStore, Principal, Tenant } from '@rookery/control-store';
import type { JobQueue } from '@rookery/jobs';
import type { CertificateAuthority } from '@rookery/pki';
import { RookeryError, type RookeryJobTypes, STORAGE_QUOTA_HEADER } from '@rookery/protocol';
import type { Logger } from 'pino';
import { Admission } from './admission.js';
import { BrowserSessions, sessionCookie } from './browser-session.js';
import { StorageCache, TtlCache } from './caches.js';
import { ConsoleFiles } from './console-files.js';
import { DatabaseRecords } from './database-records.js';
import * as Wire from './gateway-requests.js';
import type { HostClient } from './host-client.js';
import { FleetShares, type LimitShares, WHOLE_LIMITS } from './limit-shares.js';
import { DEFAULT_LIVE_LIMITS, LiveConnectionLimits, type LiveLimits } from './live-limits.js';
import { LiveSockets } from './live-sockets.js';
import { UsageMeter } from './metering.js';
import { GatewayMetrics } from './metrics.js';
import { OpenApiDocument } from './openapi.js';
import { isOwnRoute, GATEWAY_OWN_ROUTES as OWN } from './own-routes.js';
import { PrincipalDirectory, type Resolved } from './principals.js';
import { type ProxyOutcome, proxyToTenant, TenantUnreachable } from './proxy.js';
import { RateLimiter } from './rate-limiter.js';
import { DEFAULT_RAVEN_TCP_LIMITS, type RavenTcpLimits } from './ravendb-tcp/connection.js';
import { type RavenTcpListener, startRavenTcpListener } from './ravendb-tcp/listener.js';
import { serveRavenTcpInfo } from './ravendb-tcp.js';
import { gatewayError, sendProblem, unexpectedFailure } from './refusal.js';
import { readBody } from './request-body.js';
import { classifyTenantRoute, isControlPath, type TenantRoute } from './route-access.js';
import { applyServerTimeouts, DEFAULT_SERVER_TIMEOUTS, type ServerTimeouts } from './server-timeouts.js';
import { TenantPools } from './tenant-pool.js';
import { LocalRouter, type TenantRouter } from './tenant-router.js';
import { TwoFactor, type TwoFactorOptions } from './two-factor.js';
import { Upgrades } from './upgrade.js';
import { UsageFlusher } from './usage-flusher.js';

export interface ServerCertificate {
  certPem: string;
  keyPem: string;
}

export interface GatewayOptions {
  host: string;
  port: number;
  /** Its certificate is the one client certificates must chain to; the control API issues with it. */
  ca: CertificateAuthority;
  serverCertificate: ServerCertificate;
  store: ControlStore;
  /** One machine: the host on this machine (ROOKERY_HOST_URL). Not used when `router` is given. */
  hosts?: HostClient;
  /** How tenants are reached (tenant-router.ts): a FleetRouter in a fleet; a LocalRouter on `hosts` otherwise. */
  router?: TenantRouter;
  masterKey: Buffer;
  /** The worker fleet's job queue, for the control API's job routes (without it they answer 503). */
  jobs?: JobQueue<RookeryJobTypes> | null;
  logger: Logger;
  usageFlushMs?: number;
  /** How long a tenant's stored bytes are trusted before asking the host again. */
  storageCheckMs?: number;
  /** How long a tenant record (and its quota) is trusted before reading it again. */
  tenantCacheMs?: number;
  /** The HTTPS server's timeouts (server-timeouts.ts says what each bounds); DEFAULT_SERVER_TIMEOUTS otherwise. */
  timeouts?: Partial<ServerTimeouts>;
  /** How often open WebSockets are metered and checked for revocation (live-sockets.ts); 1 s by default. */
  liveSweepMs?: number;
  /** WebSockets, streams, queries and bulk inserts one tenant may hold in flight (live-limits.ts); DEFAULT_LIVE_LIMITS otherwise. */
  liveLimits?: Partial<LiveLimits>;
  /** TOTP codes a person may try per window, counted in the control store for every gateway (DEFAULT_TWO_FACTOR_LIMIT). */
  twoFactorLimit?: TwoFactorOptions['limit'];
  /** Connections the gateway opens to one tenant (tenant-pool.ts); TENANT_POOL_MAX_SOCKETS otherwise. */
  tenantConnections?: number;
  /**
   * Share tenants' rate and live-connection limits with the other gateways on the same store (limit-shares.ts);
   * without it this gateway enforces every limit whole, alone (one machine).
   */
  fleet?: GatewayFleetOptions | null;
  /** Names this gateway in the store (heartbeats, usage flush ids); a fresh one per start otherwise. */
  gatewayId?: string;
  /** The web console's build (services/console/dist), served at `/`; null or absent: `/` answers 404. */
  consoleDir?: string | null;
  /**
   * RavenDB's TCP protocol for the official clients' subscription workers (ravendb-tcp/), on its own TLS port
   * of `host` (0 picks a free one); null or absent: none, and `/info/remote-task/tcp` answers 501.
   */
  ravenTcp?: ({ port: number } & Partial<RavenTcpLimits>) | null;
  now?: () => number;
}

export interface GatewayFleetOptions {
  /** How often the gateway reports its demand and reads the others' (ROOKERY_GATEWAY_HEARTBEAT_MS). */
  heartbeatMs: number;
  /** How long after its last heartbeat the others still count it (ROOKERY_GATEWAY_HEARTBEAT_TTL_MS). */
  ttlMs: number;
}

export interface Gateway {
  url: string;
  port: number;
  /** The RavenDB TCP listener's port; null when it is off. */
  ravenTcpPort: number | null;
  /** WebSockets open through this gateway now. */
  openWebSockets(): number;
  /** New handshakes get the new certificate; open connections keep theirs. */
  rotateServerCertificate(certificate: ServerCertificate): void;
  flushUsage(): Promise<void>;
  /** Reports demand to the store and reads the other gateways' now (done every heartbeatMs; none alone). */
  heartbeat(): Promise<void>;
  close(): Promise<void>;
}

const MAX_GATEWAY_BODY_BYTES = 16 * 1024;

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const now = options.now ?? Date.now;
  const log = options.logger;
  const directory = new PrincipalDirectory(options.store, { pollMs: 1_000, cacheMs: 30_000, now });
  await directory.start();
  const twoFactor = new TwoFactor(options.store, options.masterKey, { limit: options.twoFactorLimit, now });
  const browsers = new BrowserSessions(options.store, options.masterKey);
  const consoleFiles = ConsoleFiles.load(options.consoleDir ?? null);
  const meter = new UsageMeter(now);
  const gatewayId = options.gatewayId ?? `gw-${randomUUID()}`;
  const fleet = options.fleet
    ? new FleetShares({
        store: options.store,
        gatewayId,
        ...options.fleet,
        log: log.child({ unit: 'fleet' }),
      })
    : null;
  await fleet?.start();
  const shares: LimitShares = fleet ?? WHOLE_LIMITS;
  const router = options.router ?? localRouter(options);
  const metrics = new GatewayMetrics();
  const control = await buildControlApi({
    store: options.store,
    ca: options.ca,
    masterKey: options.masterKey,
    jobs: options.jobs ?? null,
    logger: log.child({ unit: 'control' }),
  });
  const openApi = new OpenApiDocument(control.openApi);
  const databaseRecords = new DatabaseRecords(options.store, router, log);
  // Tenants (and their quotas) are read from the store at most once a second per tenant.
  const tenants = new TtlCache(
    (id: string) => options.store.getTenant(id),
    options.tenantCacheMs ?? 1_000,
    now,
  );
  const admission = new Admission({
    directory,
    twoFactor,
    tenants,
    limiter: new RateLimiter(now),
    storage: new StorageCache(router, options.storageCheckMs ?? 10_000, now),
    liveLimits: new LiveConnectionLimits({ ...DEFAULT_LIVE_LIMITS, ...options.liveLimits }, (limit) =>
      shares.liveShare(limit),
    ),
    shares,
  });
  let requestCounter = 0;
  const nextRequestId = () => `${process.pid.toString(36)}-${(++requestCounter).toString(36)}`;
  const live = new LiveSockets({
    resolve: (thumbprint) => directory.resolve(thumbprint),
    meter,
    now,
    log: log.child({ unit: 'live' }),
    sweepMs: options.liveSweepMs ?? 1_000,
  });
  metrics.countOpenWebSockets(() => live.size);
  const upgrades = new Upgrades({ admission, browsers, live, meter, metrics, log, nextRequestId, router });
  let closing: Promise<void> | null = null;
  /** Set once the HTTPS server listens (it serves /info/remote-task/tcp, which names this listener). */
  let ravenTcp: RavenTcpListener | null = null;

  const tls = (certificate: ServerCertificate) => ({
    key: certificate.keyPem,
    cert: certificate.certPem,
    ca: [options.ca.certPem],
    requestCert: true,
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2' as const,
  });
  const server = https.createServer(tls(options.serverCertificate), (request, response) => {
    const requestId = nextRequestId();
    const started = performance.now();
    handle(request, response, requestId)
      .catch((error: unknown) => {
        if (error instanceof RookeryError) return sendProblem(response, error);
        const { answer, bug } = unexpectedFailure(error);
        if (bug) log.error({ err: error, reqId: requestId }, 'gateway request failed');
        else log.warn({ err: error, reqId: requestId }, 'the control store cannot be reached');
        sendProblem(response, answer);
      })
      .finally(() =>
        metrics.observe(request.method ?? 'GET', response.statusCode, performance.now() - started),
      );
  });
  applyServerTimeouts(server, { ...DEFAULT_SERVER_TIMEOUTS, ...options.timeouts });
  server.on('upgrade', (request: http.IncomingMessage, socket, head: Buffer) =>
    upgrades.handle(request, socket, head),
  );

  async function handle(request: http.IncomingMessage, response: http.ServerResponse, requestId: string) {
    const url = request.url ?? '/';
    const path = url.split('?', 1)[0]!;
    const caller = await admission.identify(request.socket as TLSSocket);
    const { principal } = caller;

    // Browsers present the certificate to any page that asks (browser-session.ts).
    browsers.refuseCrossSite(request);
    if (isOwnRoute(OWN.twoFactor, path, request)) return openTwoFactorSession(request, response, caller);
    if (consoleFiles?.serve(request, response, path)) return;
    if (isOwnRoute(OWN.openApi, path, request)) return openApi.serve(response);
    browsers.requireCsrfToken(request);
    if (isOwnRoute(OWN.signOut, path, request)) return browsers.signOut(request, response);
    // Before the second factor: a person collects the authenticator that opens their first session.
    if (path === OWN.enrolmentStatus.path) return serveEnrolment(request, response, principal);
    await admission.requireSecondFactor(caller, request.headers.cookie);
    if (isOwnRoute(OWN.session, path, request)) {
      const session =
        principal.kind === 'person'
          ? await twoFactor.sessionFor(caller.certificate.thumbprint, request.headers.cookie)
          : null;
      return browsers.describe(request, response, caller, session);
    }
    if (isOwnRoute(OWN.usage, path, request)) return sendUsage(url, response, caller);
    if (isOwnRoute(OWN.metrics, path, request)) {
      if (principal.role.kind !== 'operator') throw gatewayError('Forbidden', 'Metrics are for operators.');
      response.writeHead(200, { 'content-type': metrics.contentType });
      response.end(await metrics.text());
      return;
    }
    if (isControlPath(path)) return serveControl(request, response, principal, requestId);

    if (path === OWN.ravenTcp.path)
      return serveRavenTcpInfo(request, response, principal, admission, ravenTcp);
    const route = classifyTenantRoute(request.method ?? 'GET', url);
    if (!route) throw gatewayError('RouteNotFound', `There is no route ${request.method} ${path}.`);
    const tenant = await admission.admit(principal, route);
    // A request of a slow class (a stream, a query, a bulk insert) holds one of its class's places until its
    // answer ends or its reader leaves, so that no class takes every connection of the pool to the tenant.
    const release = route.holds
      ? await admission.placeFor(tenant.id, route.holds, clientGone(response))
      : null;
    let outcome: ProxyOutcome;
    try {
      outcome = await forward(
        request,
        response,
        tenant.id,
        route.upstreamPath,
        requestId,
        quotaHeaders(tenant, route),
      );
    } finally {
      release?.();
    }
    databaseRecords.afterProxied(tenant.id, request.method ?? 'GET', route.upstreamPath, outcome.status);
    meter.record(tenant.id, outcome);
    metrics.tenantRequest(tenant.id);
  }

  async function serveControl(
    request: http.IncomingMessage,
    response: http.ServerResponse,
    principal: Principal,
    requestId: string,
  ) {
    // A tenant principal's control requests count against its tenant like any other request.
    // Operators belong to no tenant: nothing limits or meters theirs.
    const tenant: Tenant | null = principal.tenantId === null ? null : await tenants.get(principal.tenantId);
    if (tenant) admission.takeRequestToken(tenant);
    // A database creation relayed a moment ago is in the store before its listing is read.
    await databaseRecords.settled();
    const answer = await control.serve(request, response, { principal, requestId });
    if (tenant) {
      // Bodies here are small JSON read whole by the API: their declared length is what it read.
      meter.record(tenant.id, {
        bytesIn: Number(request.headers['content-length']) || 0,
        bytesOut: answer.bytesOut,
        workUnits: 1,
      });
      metrics.tenantRequest(tenant.id);
    }
  }

  async function forward(
    request: http.IncomingMessage,
    response: http.ServerResponse,
    tenantId: string,
    path: string,
    requestId: string,
    internalHeaders: string[],
  ) {
    for (let attempt = 1; ; attempt++) {
      const target = await router.target(tenantId);
      try {
        return await proxyToTenant(request, response, {
          path,
          pool: target.pool,
          requestId,
          internalHeaders,
        });
      } catch (error) {
        if (!(error instanceof TenantUnreachable)) throw error;
        log.warn({ err: error, tenant: tenantId, reqId: requestId }, 'the tenant did not answer');
        const refusal = await router.unreachable(tenantId, target, error);
        if (response.headersSent) throw error;
        // Once more, only when nothing of the request left the gateway (a fleet host's relay answered
        // 421 or could not be reached, and the placement names another host now): safe for any method.
        if (refusal === null && !error.connected && attempt === 1) continue;
        throw (
          refusal ??
          gatewayError('TenantUnavailable', 'The tenant is moving between hosts; retry the request.', {}, 1)
        );
      }
    }
  }

  async function openTwoFactorSession(
    request: http.IncomingMessage,
    response: http.ServerResponse,
    resolved: Resolved,
  ) {
    if (resolved.principal.kind !== 'person') {
      throw gatewayError('InvalidRequest', 'Only certificates of people use two-factor sessions.');
    }
    const body = Wire.TwoFactorRequestSchema.safeParse(await readJson(request));
    if (!body.success) {
      throw gatewayError(
        'InvalidRequest',
        `Send {"code": "123456", "minutes": 60, "binding": "browser"|"certificate"}: ${body.error.issues.map((i) => i.message).join('; ')}`,
      );
    }
    const outcome = await twoFactor.open(resolved.principal, resolved.certificate.thumbprint, body.data);
    if (!outcome.ok) throw gatewayError(outcome.code, outcome.message, {}, outcome.retryAfterSeconds || null);
    const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json' };
    if (outcome.cookieToken)
      headers['set-cookie'] = sessionCookie(outcome.cookieToken, body.data.minutes * 60);
    response.writeHead(201, headers);
    response.end(
      JSON.stringify({
        Binding: outcome.session.binding,
        ExpiresAt: new Date(outcome.session.expiresAt).toISOString(),
        // A browser session's page sends it with every state-changing call (browser-session.ts); a
        // certificate-bound session has no cookie, so nothing to protect and no token.
        ...(outcome.cookieToken && { CsrfToken: browsers.csrfTokenFor(outcome.cookieToken) }),
      } satisfies Wire.TwoFactorSessionAnswer),
    );
  }

  /**
   * GET /auth/enrolment: `{ Pending }`, whether a tenant admin started an enrolment for this certificate's
   * person; POST: its secret and otpauth URI, once (then 404 TwoFactorEnrolmentNotPending). Another site's
   * page cannot POST it (refuseCrossSite above), and only the person's own certificate reaches it.
   */
  async function serveEnrolment(
    request: http.IncomingMessage,
    response: http.ServerResponse,
    principal: Resolved['principal'],
  ) {
    if (principal.kind !== 'person') {
      throw gatewayError(
        'InvalidRequest',
        'Only people enrol an authenticator; a program signs in with its certificate.',
      );
    }
    if (request.method === 'GET') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ Pending: await twoFactor.hasEnrolmentToCollect(principal) }));
      return;
    }
    if (request.method !== 'POST') {
      throw gatewayError(
        'RouteNotFound',
        `There is no route ${request.method} ${OWN.enrolmentStatus.path} (GET or POST).`,
      );
    }
    const enrolment = await twoFactor.collectEnrolment(principal);
    if (enrolment === null) {
      throw gatewayError(
        'TwoFactorEnrolmentNotPending',
        'No enrolment waits for this person: none was started, or it was collected already (it is shown once). Ask a tenant admin to reset your authenticator and start a new enrolment.',
      );
    }
    // Shown this once; nothing on the way may keep a copy.
    response.writeHead(201, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    response.end(JSON.stringify({ Secret: enrolment.secret, Uri: enrolment.uri }));
  }

  async function sendUsage(url: string, response: http.ServerResponse, resolved: Resolved) {
    const query = Wire.UsageQuerySchema.safeParse(
      Object.fromEntries(new URL(url, 'https://gateway').searchParams),
    );
    if (!query.success)
      throw gatewayError(
        'InvalidRequest',
        'Usage takes ?from=<epoch ms>&to=<epoch ms> (and ?tenant= for operators).',
      );
    const { principal } = resolved;
    const tenantId = principal.role.kind === 'operator' ? query.data.tenant : principal.tenantId;
    if (!tenantId) throw gatewayError('TenantRequired', 'Operators name the tenant: /usage?tenant=<id>.');
    if (principal.role.kind !== 'operator' && query.data.tenant && query.data.tenant !== tenantId) {
      throw gatewayError('Forbidden', "This certificate cannot read another tenant's usage.");
    }
    await flushUsage(); // what this gateway counted so far is included
    const to = query.data.to ?? now();
    const from = query.data.from ?? to - 24 * 60 * 60_000;
    // Storage as the host measures it for the storage quota (its files on disk, without waking the tenant).
    // Not being able to measure it now (a fleet host unreachable) leaves Bytes null, not the usage unread.
    const [rows, tenant, storage] = await Promise.all([
      options.store.usage(tenantId, from, to),
      options.store.getTenant(tenantId),
      router.storageOf(tenantId).catch((error: unknown) => {
        log.warn({ err: error, tenant: tenantId }, 'storage not measured for /usage');
        return null;
      }),
    ]);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        Tenant: tenantId,
        Minutes: rows.map((r) => ({
          Minute: new Date(r.minute).toISOString(),
          Requests: r.requests,
          BytesIn: r.bytesIn,
          BytesOut: r.bytesOut,
          WorkUnits: r.workUnits,
        })),
        Storage: { Bytes: storage?.bytes ?? null, QuotaBytes: tenant?.quota.storageBytes ?? null },
      } satisfies Wire.UsageAnswer),
    );
  }

  const flusher = new UsageFlusher(options.store, meter, gatewayId, log);
  const flushUsage = () => flusher.flush();
  const flushTimer = setInterval(() => void flushUsage(), options.usageFlushMs ?? 5_000);
  flushTimer.unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  log.info({ port }, 'gateway listening');
  ravenTcp = options.ravenTcp
    ? await startRavenTcpListener({
        host: options.host,
        port: options.ravenTcp.port,
        tls: tls(options.serverCertificate),
        deps: {
          admission,
          router,
          live,
          meter,
          metrics,
          log: log.child({ unit: 'ravendb-tcp' }),
          nextRequestId,
          limits: { ...DEFAULT_RAVEN_TCP_LIMITS, ...withoutPort(options.ravenTcp) },
        },
      })
    : null;

  return {
    url: `https://${host}:${port}`,
    port,
    ravenTcpPort: ravenTcp?.port ?? null,
    openWebSockets: () => live.size,
    rotateServerCertificate(certificate) {
      server.setSecureContext(tls(certificate));
      ravenTcp?.setSecureContext({ ...tls(certificate), certPem: certificate.certPem });
      log.info('server certificate rotated');
    },
    flushUsage,
    heartbeat: () => fleet?.heartbeat() ?? Promise.resolve(),
    close() {
      // Once: a test (or a signal handler) may close it before the code that owns it does.
      closing ??= shutDown();
      return closing;
    },
  };

  async function shutDown() {
    clearInterval(flushTimer);
    await fleet?.stop();
    directory.stop();
    // RavenDB TCP connections, negotiating or carrying a subscription, end with the gateway.
    await ravenTcp?.close();
    // Upgraded sockets still count as the server's connections: cut them, or close() waits for them.
    upgrades.close();
    // A connection busy now (an answer being sent) is idle once it ends, and close() would then wait for its
    // client to drop it, or for the keep-alive timeout: from here on an idle connection is closed at once
    // (Node reads the timeout as each answer ends; close-in-flight.test.ts).
    server.keepAliveTimeout = 1;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    router.close();
    await databaseRecords.settled();
    await control.close();
    await flushUsage();
  }
}

/** One machine: the host at ROOKERY_HOST_URL wakes tenants, which the gateway reaches on their Unix sockets. */
function localRouter(options: GatewayOptions): TenantRouter {
  if (!options.hosts) throw new Error('startGateway needs `hosts` (one machine) or `router` (a fleet)');
  return new LocalRouter(options.hosts, new TenantPools({ maxSockets: options.tenantConnections }));
}

/**
 * The tenant's storage quota, for the tenant to hold what only it can see to it: a bulk insert chunk by
 * chunk, a batch by its commands (admission.ts decides the rest before forwarding).
 */
function quotaHeaders(tenant: Tenant, route: TenantRoute): string[] {
  if (route.storage !== 'grows' && route.storage !== 'batch') return [];
  return [STORAGE_QUOTA_HEADER, String(tenant.quota.storageBytes)];
}

function withoutPort({ port: _port, ...limits }: { port: number } & Partial<RavenTcpLimits>) {
  return limits;
}

async function readJson(request: http.IncomingMessage): Promise<unknown> {
  const body = await readBody(request, MAX_GATEWAY_BODY_BYTES);
  if (body === null) throw gatewayError('PayloadTooLarge', 'This request takes a small JSON body.');
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw gatewayError('InvalidJson', 'The body is not valid JSON.');
  }
}

/**
 * A signal that aborts when the client goes away before its answer is complete, made only when asked for:
 * only a request that has to wait for a place watches its client (most never wait).
 */
function clientGone(response: http.ServerResponse): () => AbortSignal {
  return () => {
    const gone = new AbortController();
    response.once('close', () => {
      if (!response.writableFinished) gone.abort(new Error('the client went away'));
    });
    return gone.signal;
  };
}
