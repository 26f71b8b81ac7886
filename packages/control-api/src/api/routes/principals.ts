// A tenant's principals and their authenticators. Registered twice (see
// app.ts): under /control for a tenant admin's own tenant, and under
// /control/tenants/{id} for operators (and tenant admins naming their own).

import { enrolTotp, resetTotp, startTotpEnrolment } from '@rookery/control-store';
import { documented } from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../caller.js';
import { bodyOf, type ControlContext, paramsOf, queryOf } from '../context.js';
import {
  NewPrincipalSchema,
  PrincipalListQuerySchema,
  PrincipalParamsSchema,
  TenantParamsSchema,
  TotpEnrolRequestSchema,
} from '../schemas.js';
import { principalInTenant, tenantInScope } from '../scope.js';

const TenantParams = documented(TenantParamsSchema);
const PrincipalParams = documented(PrincipalParamsSchema);

export function principalRoutes(app: FastifyInstance, { store, masterKey }: ControlContext): void {
  const listSchema = {
    summary: "A page of the tenant's principals, with the total",
    params: TenantParams,
    querystring: documented(PrincipalListQuerySchema),
  };
  app.get('/principals', { schema: listSchema }, async (request) => {
    const { tenantId } = paramsOf(TenantParamsSchema, request);
    const tenant = await tenantInScope(store, callerOf(request.raw), tenantId);
    const page = queryOf(PrincipalListQuerySchema, request);
    // Counted apart from the page: a principal made between the two reads can make the total one off,
    // which a pager shows as one more (or one fewer) page; nothing is skipped within a page.
    const [principals, total] = await Promise.all([
      store.listPrincipals(tenant.id, page),
      store.countPrincipals(tenant.id),
    ]);
    return { principals, total, ...page };
  });

  const createSchema = {
    summary: 'Create a principal',
    params: TenantParams,
    body: documented(NewPrincipalSchema),
  };
  app.post('/principals', { schema: createSchema }, async (request, reply) => {
    const { tenantId } = paramsOf(TenantParamsSchema, request);
    const tenant = await tenantInScope(store, callerOf(request.raw), tenantId);
    const input = bodyOf(NewPrincipalSchema, request, 'principal');
    const principal = await store.createPrincipal({ ...input, tenantId: tenant.id });
    return reply.code(201).send(principal);
  });

  const deleteSchema = {
    summary: 'Delete a principal (its certificates stay revoked)',
    params: PrincipalParams,
  };
  app.delete('/principals/:principalId', { schema: deleteSchema }, async (request, reply) => {
    const { tenantId, principalId } = paramsOf(PrincipalParamsSchema, request);
    const tenant = await tenantInScope(store, callerOf(request.raw), tenantId);
    const principal = await principalInTenant(store, tenant, principalId);
    // Its certificates stay recorded as revoked, so gateways refuse them from the next poll.
    await store.deletePrincipal(principal.id);
    return reply.code(204).send();
  });

  const enrolSchema = {
    summary: "Enrol a person's authenticator: its secret for the admin, or left for the person to collect",
    params: PrincipalParams,
    body: documented(TotpEnrolRequestSchema),
  };
  app.post('/principals/:principalId/totp', { schema: enrolSchema }, async (request, reply) => {
    const { tenantId, principalId } = paramsOf(PrincipalParamsSchema, request);
    const tenant = await tenantInScope(store, callerOf(request.raw), tenantId);
    const principal = await principalInTenant(store, tenant, principalId);
    const { deliverTo } = bodyOf(TotpEnrolRequestSchema, request, 'enrolment');
    if (deliverTo === 'person') {
      // The person collects the secret once with their own certificate; the admin never sees it.
      return reply.code(201).send(await startTotpEnrolment(store, masterKey, { principalId: principal.id }));
    }
    const enrolment = await enrolTotp(store, masterKey, { principalId: principal.id });
    // The secret is shown this once; nothing on the way may keep a copy.
    return reply.code(201).header('cache-control', 'no-store').send(enrolment);
  });

  const resetSchema = { summary: "Reset a person's authenticator", params: PrincipalParams };
  app.delete('/principals/:principalId/totp', { schema: resetSchema }, async (request) => {
    const { tenantId, principalId } = paramsOf(PrincipalParamsSchema, request);
    const tenant = await tenantInScope(store, callerOf(request.raw), tenantId);
    const principal = await principalInTenant(store, tenant, principalId);
    return resetTotp(store, { principalId: principal.id });
  });
}
