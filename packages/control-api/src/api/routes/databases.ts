// The databases the control store records for a tenant: read from the store,
// so listing them never wakes a sleeping tenant. The gateway records the
// creations and deletions it proxies (see services/gateway).
import { documented } from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../caller.js';
import { type ControlContext, paramsOf } from '../context.js';
import { TenantParamsSchema } from '../schemas.js';
import { tenantInScope } from '../scope.js';

export function databaseRoutes(app: FastifyInstance, { store }: ControlContext): void {
  const schema = {
    summary: "The tenant's databases, as the control store records them",
    params: documented(TenantParamsSchema),
  };
  app.get('/databases', { schema }, async (request) => {
    const { tenantId } = paramsOf(TenantParamsSchema, request);
    const tenant = await tenantInScope(store, callerOf(request.raw), tenantId);
    return { databases: await store.listDatabases(tenant.id) };
  });
}
