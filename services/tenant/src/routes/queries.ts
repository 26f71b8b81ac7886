import type { QueryOptions } from '@rookery/engine';
import {
  type QueryParameters,
  QueryParametersSchema,
  type QueryRequest,
  QueryRequestSchema,
  QueryStringSchema,
  RookeryError,
} from '@rookery/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ifNoneMatch } from '../http/etag.js';
import { parseWith, type RouteContext } from './context.js';

/** `POST /databases/{db}/queries` (RQL + parameters) and `GET /databases/{db}/queries?query=…`. */
export function queryRoutes(app: FastifyInstance, context: RouteContext): void {
  app.post('/databases/:db/queries', async (request, reply) =>
    answer(
      context,
      request,
      reply,
      queryOptionsOf(parseWith(QueryRequestSchema, request.body, 'query body')),
    ),
  );

  app.get('/databases/:db/queries', async (request, reply) =>
    answer(context, request, reply, queryOptionsFromQueryString(request.query)),
  );
}

/** A query sent as a JSON body (`POST …/queries`, `POST …/streams/queries`), once parsed. */
export function queryOptionsOf(body: QueryRequest): QueryOptions {
  return {
    query: body.Query,
    parameters: body.QueryParameters ?? undefined,
    waitForNonStaleResults: body.WaitForNonStaleResults,
    waitForNonStaleResultsTimeoutMs:
      body.WaitForNonStaleResultsTimeoutMs ?? body.WaitForNonStaleResultsTimeout,
  };
}

/** A query sent in the query string (`GET …/queries?query=…`, `GET …/streams/queries?query=…`). */
export function queryOptionsFromQueryString(queryString: unknown): QueryOptions {
  const query = parseWith(QueryStringSchema, queryString, 'query string');
  return {
    query: query.query,
    parameters: query.parameters === undefined ? undefined : parseParameters(query.parameters),
    waitForNonStaleResults: query.waitForNonStaleResults === 'true',
    waitForNonStaleResultsTimeoutMs: query.waitForNonStaleResultsTimeoutMs,
  };
}

async function answer(
  context: RouteContext,
  request: FastifyRequest,
  reply: FastifyReply,
  options: QueryOptions,
) {
  const { db } = request.params as { db: string };
  const { runner } = await context.indexing.forDatabase(db);
  const prepared = await runner.prepare(options);
  reply.header('etag', prepared.resultEtag);
  // The result etag covers the query, its parameters, the index state and the database state:
  // a match means the answer would be the same, so the query does not run at all.
  if (ifNoneMatch(request.headers['if-none-match'], prepared.resultEtag)) return reply.code(304).send();
  const { result } = runner.run(prepared);
  return reply.send(result);
}

function parseParameters(text: string): QueryParameters {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new RookeryError(
      'InvalidQuery',
      'The parameters query-string value is not JSON; send an object such as {"name":"Ada"}',
    );
  }
  return parseWith(z.object({}).catchall(z.unknown()).pipe(QueryParametersSchema), json, 'parameters');
}
