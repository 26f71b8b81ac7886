import type { QueryOptions } from '@rookery/engine';
import {
  type QueryParameters,
  QueryParametersSchema,
  type QueryRequest,
  QueryRequestSchema,
  QueryResultSchema,
  QueryStringSchema,
  RookeryError,
  validated,
} from '@rookery/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { answerJson, JSON_CONTENT_TYPE } from '../http/answer-json.js';
import { ifNoneMatch } from '../http/etag.js';
import { DatabaseParams, parseWith, type RequestParts, type RouteContext } from './context.js';

const QueryBody = validated(QueryRequestSchema, 'query body');
const QueryString = validated(QueryStringSchema, 'query string');

/** `POST /databases/{db}/queries` (RQL + parameters) and `GET /databases/{db}/queries?query=…`. */
export function queryRoutes(fastify: FastifyInstance, context: RouteContext): void {
  const app = fastify.withTypeProvider<RequestParts>();
  const summary = 'Run an RQL query: a page of results with TotalResults, IsStale, facets, suggestions';
  const response = {
    200: { description: 'A page of results', schema: QueryResultSchema },
    304: { description: 'Not modified: the If-None-Match tag is still current' },
  };
  app.post(
    '/databases/:db/queries',
    { schema: { summary, params: DatabaseParams, body: QueryBody, response } },
    async (request, reply) => answer(context, request, reply, queryOptionsOf(request.body)),
  );

  // The query string is checked before the handler and parsed again by queryOptionsFromQueryString, which
  // GET streams/queries shares (and parses by hand, as its query string also takes `format`).
  const getSchema = { summary, params: DatabaseParams, querystring: QueryString, response };
  app.get('/databases/:db/queries', { schema: getSchema }, async (request, reply) =>
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
  return reply.type(JSON_CONTENT_TYPE).send(answerJson(result));
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
