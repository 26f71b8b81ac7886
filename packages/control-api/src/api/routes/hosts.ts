// The fleet's hosts, for operators only: read-only, as the control store records
// them (address, active/draining/retired, lease epoch and expiry, whether the
// lease was live when read, tenants placed). One machine registers no host, so
// the list is empty there. Draining and retiring stay with the CLI (`rookery host drain|activate|retire`).
import type { RouteSchema } from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../caller.js';
import type { ControlContext } from '../context.js';
import { requireOperator } from '../scope.js';

export function hostRoutes(app: FastifyInstance, { store }: ControlContext): void {
  const schema: RouteSchema = { summary: "The fleet's hosts (operators)" };
  app.get('/control/hosts', { schema }, async (request) => {
    requireOperator(callerOf(request.raw), "Reading the fleet's hosts");
    return { hosts: await store.listHosts() };
  });
}
