// What the gateway adds for browsers (the console, services/console): a browser presents the person's client
// certificate on every request, to any page that asks, and sends the session cookie with it. So a
// state-changing request must prove it came from the console itself:
// - one that another site's page sent (its Origin is not this gateway, or Sec-Fetch-Site says so) is refused
//   for every principal: a program's certificate imported into a browser would otherwise be usable by any
//   page the browser opens (the cookie's SameSite=Strict does not cover a certificate-bound session);
// - one that carries the session cookie must carry the session's CSRF token in X-Rookery-Csrf: an HMAC of
//   the cookie's token, which the page learns from POST /auth/2fa or GET /auth/session (same-origin reads
//   only: the gateway sends no CORS headers) and another page cannot compute, the cookie being HttpOnly.
// Programs (curl, the clients) send neither Origin nor a cookie, so none of this asks anything of them.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import type { ControlStore, TwoFactorSession } from '@rookery/control-store';
import type { Resolved } from './principals.js';
import { gatewayError } from './refusal.js';
import { cookieValue, hashToken, SESSION_COOKIE } from './two-factor.js';

export const CSRF_HEADER = 'x-rookery-csrf';
/** Methods that change nothing: reads, which other pages cannot see the answers of anyway. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Sec-Fetch-Site values of a request the browser made for the gateway's own page, or the person typed. */
const OWN_SITE = new Set(['same-origin', 'none']);

export class BrowserSessions {
  constructor(
    private readonly store: ControlStore,
    private readonly masterKey: Buffer,
  ) {}

  /** The CSRF token of a session cookie's token: derived, so no gateway needs to store it. */
  csrfTokenFor(cookieToken: string): string {
    return createHmac('sha256', this.masterKey).update(`csrf:${cookieToken}`).digest('base64url');
  }

  /**
   * Throws CrossSiteRequest for a state-changing request another site's page sent; with `any method`, for
   * any request such a page sent: a WebSocket upgrade, whose frames the same-origin policy does not keep
   * from the page that opened it (its GET would give the page a live feed of the tenant's data).
   */
  refuseCrossSite(
    request: http.IncomingMessage,
    methods: 'state-changing' | 'any method' = 'state-changing',
  ): void {
    if (methods === 'state-changing' && SAFE_METHODS.has(request.method ?? 'GET')) return;
    const site = request.headers['sec-fetch-site'];
    const origin = request.headers.origin;
    if (
      (site !== undefined && !OWN_SITE.has(site)) ||
      (origin !== undefined && !isOwnOrigin(origin, request))
    ) {
      throw gatewayError(
        'CrossSiteRequest',
        `A page of ${origin ?? 'another site'} cannot change anything here: use the console this gateway serves at /, or a program without an Origin header.`,
      );
    }
  }

  /** Throws CsrfTokenInvalid for a state-changing request with a session cookie but not its token. */
  requireCsrfToken(request: http.IncomingMessage): void {
    if (SAFE_METHODS.has(request.method ?? 'GET')) return;
    const cookieToken = cookieValue(request.headers.cookie, SESSION_COOKIE);
    if (cookieToken === null) return;
    const sent = request.headers[CSRF_HEADER];
    const expected = Buffer.from(this.csrfTokenFor(cookieToken));
    const given = Buffer.from(typeof sent === 'string' ? sent : '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw gatewayError(
        'CsrfTokenInvalid',
        'A request with the console session cookie must send its CSRF token in X-Rookery-Csrf (from POST /auth/2fa or GET /auth/session); reload the console.',
      );
    }
  }

  /** POST /auth/sign-out: ends this browser's session (only this one) and clears its cookie. */
  async signOut(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const cookieToken = cookieValue(request.headers.cookie, SESSION_COOKIE);
    if (cookieToken !== null) await this.store.deleteTwoFactorSession(hashToken(cookieToken));
    response.writeHead(204, { 'set-cookie': sessionCookie('', 0) });
    response.end();
  }

  /**
   * GET /auth/session: who is signed in, with which session (null for a program, which needs none) and,
   * for the browser's own session, its CSRF token.
   */
  describe(
    request: http.IncomingMessage,
    response: http.ServerResponse,
    caller: Resolved,
    session: TwoFactorSession | null,
  ): void {
    const { principal } = caller;
    const cookieToken = cookieValue(request.headers.cookie, SESSION_COOKIE);
    const browser = session?.binding === 'browser' && cookieToken !== null;
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    response.end(
      JSON.stringify({
        Principal: {
          Id: principal.id,
          Name: principal.name,
          Kind: principal.kind,
          TenantId: principal.tenantId,
          Role: principal.role,
        },
        Binding: session?.binding ?? null,
        ExpiresAt: session === null ? null : new Date(session.expiresAt).toISOString(),
        CsrfToken: browser ? this.csrfTokenFor(cookieToken) : null,
      }),
    );
  }
}

/** The Set-Cookie of a browser-bound session: out of reach of scripts, HTTPS only, never sent cross-site. */
export function sessionCookie(token: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${token}; Secure; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAgeSeconds}`;
}

function isOwnOrigin(origin: string, request: http.IncomingMessage): boolean {
  try {
    const url = new URL(origin);
    return url.protocol === 'https:' && url.host === request.headers.host;
  } catch {
    return false; // "null" (a sandboxed frame, a file) and anything unparsable
  }
}
