import { RookeryError, validated } from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { DatabaseParams, databaseOf, type RequestParts, type RouteContext } from '../context.js';

/** Finished operations whose state is kept, the oldest forgotten first: a client asks right after its failure. */
const KEPT_OPERATIONS = 1_000;

/** An operation's state as RavenDB's GetOperationStateCommand reads it. */
export type RavenOperationState =
  | { Status: 'InProgress'; Result: null }
  | { Status: 'Completed'; Result: { Total: number } }
  | { Status: 'Faulted'; Result: { Error: string; Message: string } };

/**
 * RavenDB's operations, as far as Rookery has them: its bulk insert asks `GET …/operations/next-operation-id`
 * for an id before it streams, and on a failure `GET …/operations/state?id=` for the reason (its
 * BulkInsertAbortedException carries `Result.Error`). Ids are this tenant process's (a restart starts
 * again from 1: nothing is kept on disk); states are kept per database, for the last KEPT_OPERATIONS.
 */
export class RavenOperations {
  private lastId = 0;
  private readonly states = new Map<string, RavenOperationState>();

  nextId(): number {
    return ++this.lastId;
  }

  /** Records `id`'s state in database `db` (case-insensitive, as database names are). */
  record(db: string, id: number, state: RavenOperationState): void {
    const key = keyOf(db, id);
    this.states.delete(key); // re-inserted last, so the map's order stays the order of last change
    this.states.set(key, state);
    if (this.states.size > KEPT_OPERATIONS) this.states.delete(this.states.keys().next().value!);
  }

  stateOf(db: string, id: number): RavenOperationState | undefined {
    return this.states.get(keyOf(db, id));
  }
}

function keyOf(db: string, id: number): string {
  return `${db.toLowerCase()}\n${id}`;
}

const OperationIdQuery = validated(z.object({ id: z.coerce.number().int().min(1) }), 'query string');

export function ravenOperationRoutes(
  fastify: FastifyInstance,
  context: RouteContext,
  operations: RavenOperations,
): void {
  const app = fastify.withTypeProvider<RequestParts>();
  const nextSchema = { summary: "An id for RavenDB's bulk insert", params: DatabaseParams };
  app.get('/databases/:db/operations/next-operation-id', { schema: nextSchema }, async (request) => {
    databaseOf(context, request); // 404 DatabaseNotFound, as for every other route of a database
    // No NodeTag: the client would then send the bulk insert to that node of its topology, and it has none.
    return { Id: operations.nextId() };
  });

  const stateSchema = {
    summary: "A RavenDB bulk insert's outcome",
    params: DatabaseParams,
    querystring: OperationIdQuery,
  };
  app.get('/databases/:db/operations/state', { schema: stateSchema }, async (request) => {
    const db = databaseOf(context, request);
    const { id } = request.query;
    const state = operations.stateOf(db.name, id);
    if (!state) {
      throw new RookeryError(
        'OperationNotFound',
        `Database ${db.name} has no operation ${id}: ids come from GET /databases/${db.name}/operations/next-operation-id, and the state of only the last ${KEPT_OPERATIONS} is kept`,
      );
    }
    return state;
  });
}
