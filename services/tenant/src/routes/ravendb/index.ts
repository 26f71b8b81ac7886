// Routes that exist only for RavenDB's official clients (docs/ravendb-compatibility.md); the rest of what those
// clients call is Rookery's own API, which answers them in their dialect where it differs (protocol's ravendb.ts).
import type { FastifyInstance } from 'fastify';
import type { RouteContext } from '../context.js';
import { hiloReturnRoute } from './hilo.js';
import { ravenIndexRoutes } from './indexes.js';
import { type RavenOperations, ravenOperationRoutes } from './operations.js';

export { RavenOperations } from './operations.js';

export function ravenRoutes(app: FastifyInstance, context: RouteContext, operations: RavenOperations): void {
  hiloReturnRoute(app, context);
  ravenIndexRoutes(app, context);
  ravenOperationRoutes(app, context, operations);
}
