// Tenants, for operators only: list, create (optionally with a first
// tenant-admin), read, delete (and purge its data through a job), and change the quota.

import { deleteTenant, provisionTenant } from '@rookery/control-store';
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../caller.js';
import { bodyOf, type ControlContext, paramsOf } from '../context.js';
import { NewTenantSchema, QuotaUpdateSchema, TenantParamsSchema } from '../schemas.js';
import { requireOperator, tenantInScope } from '../scope.js';
import { queueOf } from './jobs.js';

export function tenantRoutes(app: FastifyInstance, { store, jobs }: ControlContext): void {
  app.get('/control/tenants', async (request) => {
    requireOperator(callerOf(request.raw));
    return { tenants: await store.listTenants() };
  });

  app.post('/control/tenants', async (request, reply) => {
    requireOperator(callerOf(request.raw));
    const created = await provisionTenant(store, bodyOf(NewTenantSchema, request, 'tenant'), jobs);
    return reply.code(201).send(created);
  });

  app.get('/control/tenants/:tenantId', async (request) => {
    const caller = callerOf(request.raw);
    requireOperator(caller);
    return tenantInScope(store, caller, paramsOf(TenantParamsSchema, request).tenantId);
  });

  app.delete('/control/tenants/:tenantId', async (request, reply) => {
    const caller = callerOf(request.raw);
    requireOperator(caller);
    const tenant = await tenantInScope(store, caller, paramsOf(TenantParamsSchema, request).tenantId);
    // Its principals' certificates stay recorded as revoked, so gateways refuse them from the next
    // poll; its data goes with the purge job, so the records are not deleted without one.
    const purgeJobId = await deleteTenant(store, queueOf(jobs), tenant.id, caller.id);
    return reply.code(202).send({ deleted: tenant.id, purgeJobId });
  });

  app.patch('/control/tenants/:tenantId/quota', async (request) => {
    const caller = callerOf(request.raw);
    requireOperator(caller);
    const tenant = await tenantInScope(store, caller, paramsOf(TenantParamsSchema, request).tenantId);
    return store.updateQuota(tenant.id, bodyOf(QuotaUpdateSchema, request, 'quota'));
  });
}
