// Every route of the control API as the gateway exposes it, read from the
// control API itself (so a new route is never missed), turned into requests a
// tenant-A certificate makes against tenant B. Each route lands in one group:
// - `otherTenant`: names tenant B (`/control/tenants/{B}/…`), manages tenants or
//   reads the fleet (operators only): the answer must be 403 Forbidden;
// - `otherObjects`: the caller's own scope (`/control/…`) with the id of B's
//   principal, certificate or job: the answer must be 404, as for an id that does not exist;
// - `ownTenant`: acts on the caller's own tenant only, no id to aim at B.
import { buildControlApi } from '@rookery/control-api';
import pino from 'pino';
import type { Stack } from './stack.js';

export interface ControlRouteCase {
  route: string;
  method: string;
  path: string;
  body?: unknown;
}

export interface ControlRouteCases {
  otherTenant: ControlRouteCase[];
  otherObjects: ControlRouteCase[];
  ownTenant: ControlRouteCase[];
}

/** Bodies are not looked at before access is decided; methods that take one get a valid-looking one. */
const BODIES: Record<string, unknown> = {
  'POST /control/tenants': { id: 'stolen', name: 'Stolen' },
  'PATCH /control/tenants/:tenantId/quota': { requestsPerSecond: 1_000_000 },
  'POST /principals': { name: 'intruder', kind: 'program', role: { kind: 'tenant-admin' } },
  'POST /principals/:principalId/certificates': { validDays: 1 },
  'POST /backups': { database: 'ledger' },
  'POST /restores': { database: 'ledger', targetDatabase: 'stolen' },
};

/** Operators' routes outside `/control/tenants`: what they show spans tenants (the fleet's hosts). */
const OPERATOR_ROUTES: ReadonlySet<string> = new Set(['/control/hosts']);

export async function controlRouteCases(
  stack: Pick<Stack, 'store' | 'ca' | 'masterKey'>,
  other: { tenantId: string; principalId: string; serial: string; jobId: string },
): Promise<ControlRouteCases> {
  const api = await buildControlApi({ ...stack, logger: pino({ level: 'silent' }) });
  await api.close();
  const cases: ControlRouteCases = { otherTenant: [], otherObjects: [], ownTenant: [] };
  for (const { method, url } of api.routes) {
    const scoped = url.replace(/^\/control(\/tenants\/:tenantId)?/, '');
    const body =
      BODIES[`${method} ${url}`] ?? BODIES[`${method} ${scoped}`] ?? (method === 'POST' ? {} : undefined);
    const path = url
      .replace(':tenantId', other.tenantId)
      .replace(':principalId', other.principalId)
      .replace(':serial', other.serial)
      .replace(':jobId', other.jobId);
    const entry = { route: `${method} ${url}`, method, path, body };
    if (url.startsWith('/control/tenants') || OPERATOR_ROUTES.has(url)) cases.otherTenant.push(entry);
    else if (url.includes(':principalId') || url.includes(':serial') || url.includes(':jobId'))
      cases.otherObjects.push(entry);
    else cases.ownTenant.push(entry);
  }
  return cases;
}
