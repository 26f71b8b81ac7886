// GET /openapi.json: Rookery's API as OpenAPI 3.1, put together once at start from three parts, each generated
// from the zod schemas its routes declare: the tenant API (generated at build time into @rookery/protocol's
// openapi/tenant.json: the gateway may not import the tenant's code), the control API (from the app the
// gateway hosts) and the gateway's own routes (below, from the schemas gateway.ts parses with).
//
// Who may read it: every caller the gateway lets in, before the second factor. It holds no secrets (the same
// routes and shapes are in the repository's README and docs/api.md), and a person about to open a two-factor
// session, or a program being written, needs it most. The TLS handshake has already checked the certificate.
import type http from 'node:http';
import {
  type DeclaredRoute,
  documented,
  type OpenApiFragment,
  openApiDocument,
  openApiPaths,
  tenantOpenApiFragment,
} from '@rookery/protocol';
import { TwoFactorRequestSchema, UsageQuerySchema } from './gateway-requests.js';

/**
 * The routes gateway.ts answers itself. It is not a fastify app, so there is no onRoute to list them: a route
 * added there is added here too (openapi.test.ts reads this list and proves each is served).
 */
export const GATEWAY_ROUTES: readonly DeclaredRoute[] = [
  {
    method: 'POST',
    url: '/auth/2fa',
    schema: {
      summary: "Open a two-factor session for a person's certificate with a TOTP code",
      body: documented(TwoFactorRequestSchema),
    },
  },
  {
    method: 'GET',
    url: '/auth/session',
    schema: { summary: 'Who the caller is, and its two-factor session (with its CSRF token for a browser)' },
  },
  { method: 'POST', url: '/auth/sign-out', schema: { summary: "End the browser's session" } },
  {
    method: 'GET',
    url: '/auth/enrolment',
    schema: {
      summary: 'Whether an authenticator waits for this person to collect it (before the second factor)',
    },
  },
  {
    method: 'POST',
    url: '/auth/enrolment',
    schema: { summary: "Collect the authenticator's secret and otpauth URI, once" },
  },
  {
    method: 'GET',
    url: '/usage',
    schema: {
      summary: "A tenant's metered usage (operators name the tenant)",
      querystring: documented(UsageQuerySchema),
    },
  },
  { method: 'GET', url: '/metrics', schema: { summary: "The gateway's Prometheus metrics (operators)" } },
  { method: 'GET', url: '/openapi.json', schema: { summary: 'This document' } },
];

/** Writes among GATEWAY_ROUTES that take no body, each for its reason (openapi.test.ts). */
export const GATEWAY_BODYLESS_WRITES: ReadonlySet<string> = new Set([
  // The session is the caller's cookie.
  'POST /auth/sign-out',
  // The enrolment is the certificate's person's.
  'POST /auth/enrolment',
]);

const DESCRIPTION = [
  "Rookery's HTTPS API, through the gateway over mutual TLS (a client certificate is required; a person's also",
  "needs a two-factor session: POST /auth/2fa). The tenant routes act on the tenant of the caller's certificate;",
  'an operator names one by prefixing them with /tenants/{tenantId}. Errors are application/problem+json with a',
  "stable `code`. Generated from the routes' zod schemas; docs/api.md says how.",
].join(' ');

export class OpenApiDocument {
  static readonly PATH = '/openapi.json';
  /** The document's text, built once: it only changes with the code. */
  readonly text: string;

  constructor(control: OpenApiFragment, tenant: OpenApiFragment = tenantOpenApiFragment()) {
    const gateway = openApiPaths(GATEWAY_ROUTES, 'Gateway');
    this.text = JSON.stringify(
      openApiDocument({ title: 'Rookery', version: '1', description: DESCRIPTION }, [
        tenant,
        control,
        gateway,
      ]),
    );
  }

  serve(response: http.ServerResponse): void {
    response.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-cache',
    });
    response.end(this.text);
  }
}
