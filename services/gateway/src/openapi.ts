// GET /openapi.json: Rookery's API as OpenAPI 3.1, put together once at start from three parts, each generated
// from the zod schemas its routes declare: the tenant API (generated at build time into @rookery/protocol's
// openapi/tenant.json: the gateway may not import the tenant's code), the control API (from the app the
// gateway hosts) and the gateway's own routes (own-routes.ts, the table gateway.ts dispatches on).
//
// Who may read it: every caller the gateway lets in, before the second factor. It holds no secrets (the same
// routes and shapes are in the repository's README and docs/api.md), and a person about to open a two-factor
// session, or a program being written, needs it most. The TLS handshake has already checked the certificate.
import type http from 'node:http';
import {
  type OpenApiFragment,
  openApiDocument,
  openApiPaths,
  tenantOpenApiFragment,
} from '@rookery/protocol';
import { GATEWAY_ROUTES } from './own-routes.js';

const DESCRIPTION = [
  "Rookery's HTTPS API, through the gateway over mutual TLS (a client certificate is required; a person's also",
  "needs a two-factor session: POST /auth/2fa). The tenant routes act on the tenant of the caller's certificate;",
  'an operator names one by prefixing them with /tenants/{tenantId}. Errors are application/problem+json with a',
  "stable `code`. Generated from the routes' zod schemas; docs/api.md says how.",
].join(' ');

export class OpenApiDocument {
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
