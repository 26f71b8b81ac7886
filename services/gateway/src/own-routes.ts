// The routes gateway.ts answers itself, in one table. gateway.ts is not a fastify app (no router, no onRoute to
// list its routes), so this table is what it dispatches on — it compares the request's path and method with
// these entries, never with a path of its own (own-routes.test.ts) — and what the OpenAPI document lists
// (GATEWAY_ROUTES, below). A route added to the gateway is added here, and is then documented by construction.
// The order in which gateway.ts tries them is not here: it follows the admission steps (some are answered before
// the second factor or the CSRF check), which gateway.ts's comments explain.
import type { DeclaredRoute, RouteSchema } from '@rookery/protocol';
import { documented } from '@rookery/protocol';
import { z } from 'zod';
import {
  EnrolmentAnswerSchema,
  EnrolmentPendingAnswerSchema,
  RavenTcpInfoAnswerSchema,
  RavenTcpInfoQuerySchema,
  SessionAnswerSchema,
  TwoFactorRequestSchema,
  TwoFactorSessionAnswerSchema,
  UsageAnswerSchema,
  UsageQuerySchema,
} from './gateway-requests.js';
import { RAVEN_TCP_INFO } from './ravendb-tcp.js';

export interface GatewayOwnRoute {
  method: 'GET' | 'POST';
  path: string;
  schema: RouteSchema & { summary: string };
  /** A write that takes no body: why (the coverage check asks every other write for its body's schema). */
  bodyless?: string;
}

export const GATEWAY_OWN_ROUTES = {
  twoFactor: {
    method: 'POST',
    path: '/auth/2fa',
    schema: {
      summary: "Open a two-factor session for a person's certificate with a TOTP code",
      body: documented(TwoFactorRequestSchema),
      response: { 201: { description: 'The session is open', schema: TwoFactorSessionAnswerSchema } },
    },
  },
  openApi: {
    method: 'GET',
    path: '/openapi.json',
    schema: {
      summary: 'This document',
      response: { 200: { description: 'OpenAPI 3.1', schema: z.record(z.string(), z.unknown()) } },
    },
  },
  signOut: {
    method: 'POST',
    path: '/auth/sign-out',
    schema: {
      summary: "End the browser's session",
      response: { 204: { description: 'The session is ended and its cookie cleared' } },
    },
    bodyless: "The session is the caller's cookie.",
  },
  enrolmentStatus: {
    method: 'GET',
    path: '/auth/enrolment',
    schema: {
      summary: 'Whether an authenticator waits for this person to collect it (before the second factor)',
      response: { 200: { description: 'Pending or not', schema: EnrolmentPendingAnswerSchema } },
    },
  },
  enrolmentCollect: {
    method: 'POST',
    path: '/auth/enrolment',
    schema: {
      summary: "Collect the authenticator's secret and otpauth URI, once",
      response: { 201: { description: 'Shown this once', schema: EnrolmentAnswerSchema } },
    },
    bodyless: "The enrolment is the certificate's person's.",
  },
  session: {
    method: 'GET',
    path: '/auth/session',
    schema: {
      summary: 'Who the caller is, and its two-factor session (with its CSRF token for a browser)',
      response: { 200: { description: 'The caller and its session', schema: SessionAnswerSchema } },
    },
  },
  usage: {
    method: 'GET',
    path: '/usage',
    schema: {
      summary: "A tenant's metered usage (operators name the tenant)",
      querystring: documented(UsageQuerySchema),
      response: { 200: { description: 'Usage per minute, and storage', schema: UsageAnswerSchema } },
    },
  },
  metrics: {
    method: 'GET',
    path: '/metrics',
    schema: {
      summary: "The gateway's Prometheus metrics (operators)",
      response: {
        200: { description: 'Prometheus text exposition', schema: z.string(), mediaType: 'text/plain' },
      },
    },
  },
  ravenTcp: {
    method: 'GET',
    path: RAVEN_TCP_INFO,
    schema: {
      summary:
        "Where RavenDB's subscription workers connect: the gateway's RavenDB TCP listener (501 when off)",
      querystring: documented(RavenTcpInfoQuerySchema),
      response: { 200: { description: "RavenDB's TcpConnectionInfo", schema: RavenTcpInfoAnswerSchema } },
    },
  },
} as const satisfies Record<string, GatewayOwnRoute>;

/** Whether the request is `route`: its path and its method. */
export function isOwnRoute(route: GatewayOwnRoute, path: string, request: { method?: string }): boolean {
  return path === route.path && request.method === route.method;
}

/** The table as the OpenAPI document's routes (openapi.ts). */
export const GATEWAY_ROUTES: readonly DeclaredRoute[] = Object.values(GATEWAY_OWN_ROUTES).map((route) => ({
  method: route.method,
  url: route.path,
  schema: route.schema,
}));

/** Writes among them that take no body, each for its reason (the adversarial openapi suite's coverage check). */
export const GATEWAY_BODYLESS_WRITES: ReadonlySet<string> = new Set(
  Object.values(GATEWAY_OWN_ROUTES as Record<string, GatewayOwnRoute>)
    .filter((route) => route.bodyless)
    .map((route) => `${route.method} ${route.path}`),
);
