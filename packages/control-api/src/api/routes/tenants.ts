// Tenants, for operators only: list, create (optionally with a first
// tenant-admin), read, delete (and purge its data through a job), and change the quota.

import { deleteTenant, provisionTenant } from '@rookery/control-store';
import { documented, type RouteSchema } from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../caller.js';
import { bodyOf, type ControlContext, paramsOf } from '../context.js';
import { NewTenantSchema, QuotaUpdateSchema, TenantParamsSchema } from '../schemas.js';
import { requireOperator, tenantInScope } from '../scope.js';
import { queueOf } from './jobs.js';

const TenantParams = documented(TenantParamsSchema);

export function tenantRoutes(app: FastifyInstance, { store, jobs }: ControlContext): void {
  // Typed: a schema of a summary alone shares no property with fastify's FastifySchema.
  const listSchema: RouteSchema = { summary: 'Every tenant (operators)' };
  app.get('/control/tenants', { schema: listSchema }, async (request) => {
    requireOperator(callerOf(request.raw));
    return { tenants: await store.listTenants() };
  });

  const createSchema = {
    summary: 'Create a tenant, optionally with its first tenant admin (operators)',
    body: documented(NewTenantSchema),
  };
  app.post('/control/tenants', { schema: createSchema }, async (request, reply) => {
    requireOperator(callerOf(request.raw));
    const created = await provisionTenant(store, bodyOf(NewTenantSchema, request, 'tenant'), jobs);
    return reply.code(201).send(created);
  });

  const readSchema = { summary: 'A tenant (operators)', params: TenantParams };
  app.get('/control/tenants/:tenantId', { schema: readSchema }, async (request) => {
    const caller = callerOf(request.raw);
    requireOperator(caller);
    return tenantInScope(store, caller, paramsOf(TenantParamsSchema, request).tenantId);
  });

  const deleteSchema = {
    summary: 'Delete a tenant; a job purges its data (operators)',
    params: TenantParams,
  };
  app.delete('/control/tenants/:tenantId', { schema: deleteSchema }, async (request, reply) => {
    const caller = callerOf(request.raw);
    requireOperator(caller);
    const tenant = await tenantInScope(store, caller, paramsOf(TenantParamsSchema, request).tenantId);
    // Its principals' certificates stay recorded as revoked, so gateways refuse them from the next
    // poll; its data goes with the purge job, so the records are not deleted without one.
    const purgeJobId = await deleteTenant(store, queueOf(jobs), tenant.id, caller.id);
    return reply.code(202).send({ deleted: tenant.id, purgeJobId });
  });

  const quotaSchema = {
    summary: "Change a tenant's quota (operators)",
    params: TenantParams,
    body: documented(QuotaUpdateSchema),
  };
  app.patch('/control/tenants/:tenantId/quota', { schema: quotaSchema }, async (request) => {
    const caller = callerOf(request.raw);
    requireOperator(caller);
    const tenant = await tenantInScope(store, caller, paramsOf(TenantParamsSchema, request).tenantId);
    return store.updateQuota(tenant.id, bodyOf(QuotaUpdateSchema, request, 'quota'));
  });
}
