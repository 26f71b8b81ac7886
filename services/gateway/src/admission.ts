// Everything the gateway checks before a byte reaches a tenant, shared by both ways in (a request and a
// WebSocket upgrade), so the two can never disagree on who gets through: the client certificate's
// principal, a person's two-factor session, the route's authorisation, the tenant's quotas, its live
// connections (WebSockets, NDJSON streams). Reaching the tenant is tenant-router.ts's. Each step throws
// a Refusal the caller writes back its own way.
import type { TLSSocket } from 'node:tls';
import type { Principal, Tenant } from '@rookery/control-store';
import { identityOf, isPkiError } from '@rookery/pki';
import { authorize } from './authorize.js';
import type { StorageCache, TtlCache } from './caches.js';
import type { LimitShares } from './limit-shares.js';
import type { LiveConnectionLimits, LiveKind, Release } from './live-limits.js';
import type { PrincipalDirectory, Resolved } from './principals.js';
import type { RateLimiter } from './rate-limiter.js';
import { gatewayError } from './refusal.js';
import type { TenantRoute } from './route-access.js';
import type { TwoFactor } from './two-factor.js';

export interface AdmissionDeps {
  directory: PrincipalDirectory;
  twoFactor: TwoFactor;
  /** Tenant records (and their quotas) by id; null for a tenant that does not exist. */
  tenants: TtlCache<Tenant | null>;
  limiter: RateLimiter;
  storage: StorageCache;
  liveLimits: LiveConnectionLimits;
  /** This gateway's part of each tenant's rate among the gateways (WHOLE_LIMITS when it is alone). */
  shares: LimitShares;
}

export class Admission {
  /** A connection's certificate is read once, not on every request it carries. */
  private readonly identities = new WeakMap<TLSSocket, { thumbprint: string } | null>();

  constructor(private readonly deps: AdmissionDeps) {}

  /** The principal of the connection's client certificate: refused without one, or when it no longer counts. */
  async identify(socket: TLSSocket): Promise<Resolved> {
    const thumbprint = this.thumbprintOf(socket);
    if (!thumbprint)
      throw gatewayError('CertificateRequired', 'Present a client certificate issued by Rookery.');
    const resolution = await this.deps.directory.resolve(thumbprint);
    if (!resolution.ok) throw gatewayError(resolution.code, resolution.message);
    return resolution.resolved;
  }

  /**
   * A person's certificate needs a two-factor session: the browser's cookie, or one bound to the
   * certificate. Resolves with when that session ends (epoch ms); null for programs, which need none.
   */
  async requireSecondFactor(caller: Resolved, cookieHeader: string | undefined): Promise<number | null> {
    if (caller.principal.kind !== 'person') return null;
    const session = await this.deps.twoFactor.sessionFor(caller.certificate.thumbprint, cookieHeader);
    if (!session) {
      throw gatewayError(
        'TwoFactorRequired',
        'This is a person\'s certificate: POST /auth/2fa with {"code": "<6 digits from your authenticator>"} to open a session, then retry.',
      );
    }
    return session.expiresAt;
  }

  /**
   * The tenant a classified route may reach for this principal, held to its request rate and, for
   * requests that would store more, its storage quota. What frees space (deletes, index drops and
   * resets, sweeps) is never refused for storage, or a tenant at its quota could never get under it; a
   * batch is left to the tenant, which refuses it at the quota unless it only deletes (route-access.ts).
   */
  async admit(principal: Principal, route: TenantRoute): Promise<Tenant> {
    const decision = authorize(principal, route);
    if (!decision.ok) throw gatewayError(decision.code, decision.message);
    const tenant = await this.deps.tenants.get(decision.tenantId);
    // Unknown tenants answer like forbidden ones: names of other tenants are not disclosed.
    if (!tenant)
      throw gatewayError('Forbidden', `This certificate cannot reach tenant ${decision.tenantId}.`);
    this.takeRequestToken(tenant);
    if (route.storage === 'grows') {
      const bytes = await this.deps.storage.bytesOf(tenant.id);
      if (bytes !== null && bytes >= tenant.quota.storageBytes) {
        throw gatewayError(
          'StorageQuotaExceeded',
          `Tenant ${tenant.id} stores ${bytes} bytes, at its quota of ${tenant.quota.storageBytes}; delete data (deletes, index drops and resets are still accepted) or raise the quota. Reads keep working.`,
          { limit: 'storageBytes', value: tenant.quota.storageBytes },
        );
      }
    }
    return tenant;
  }

  /** One request of the tenant's rate (this gateway's share of it); refused with Retry-After over it. */
  takeRequestToken(tenant: Tenant): void {
    this.deps.shares.arrived(tenant.id);
    const share = this.deps.shares.rateShare(tenant.id, tenant.quota.requestsPerSecond);
    const rate = this.deps.limiter.take(tenant.id, share);
    if (rate.allowed) return;
    throw gatewayError(
      'RateLimited',
      `Tenant ${tenant.id} is over its limit of ${tenant.quota.requestsPerSecond} requests/s; retry after ${rate.retryAfterSeconds} s or raise the quota.`,
      { limit: 'requestsPerSecond', value: tenant.quota.requestsPerSecond },
      rate.retryAfterSeconds,
    );
  }

  /**
   * Holds one of the tenant's places of `kind` (a WebSocket, or a request of a slow class) until the caller
   * releases it, when the socket or the answer has ended: 429 at the tenant's limit (live-limits.ts). Asked
   * after `admit`, so only a caller that may reach the route holds one.
   */
  holdLiveConnection(tenantId: string, kind: LiveKind): Release {
    return this.deps.liveLimits.hold(tenantId, kind);
  }

  /** As `holdLiveConnection`, except that a query or bulk insert over its limit waits for a place first. */
  placeFor(tenantId: string, kind: LiveKind, gone: () => AbortSignal): Promise<Release> {
    return this.deps.liveLimits.place(tenantId, kind, gone);
  }

  private thumbprintOf(socket: TLSSocket): string | null {
    let identity = this.identities.get(socket);
    if (identity === undefined) {
      const raw = socket.getPeerCertificate(false)?.raw;
      identity = raw ? { thumbprint: principalThumbprint(raw) } : null;
      this.identities.set(socket, identity);
    }
    return identity?.thumbprint ?? null;
  }
}

/**
 * The thumbprint of a principal's certificate. A certificate of Rookery's CA that names no principal (a
 * service's, which the gateway itself presents to fleet hosts' relays) passed the TLS handshake but is no
 * client's: 401, never a 500.
 */
function principalThumbprint(raw: Buffer): string {
  try {
    return identityOf(raw).thumbprint;
  } catch (error) {
    if (!isPkiError(error)) throw error;
    throw gatewayError('CertificateNotRecognised', error.message);
  }
}
