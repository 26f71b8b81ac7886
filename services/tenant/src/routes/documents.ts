import { type Database, type LoadedDocument, ResponseBudget } from '@rookery/engine';
import {
  DocumentIdSchema,
  DocumentInputSchema,
  GetDocumentsResponseSchema,
  type Parsed,
  PutDocumentResponseSchema,
  RookeryError,
  referencedIds,
  validated,
} from '@rookery/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { JSON_CONTENT_TYPE } from '../http/answer-json.js';
import { entityTag, expectedFromIfMatch, ifNoneMatch } from '../http/etag.js';
import { DatabaseParams, databaseOf, type RequestParts, type RouteContext } from './context.js';

const oneOrMany = <T extends z.ZodType>(item: T) =>
  z.union([item, z.array(item)]).transform((v) => (Array.isArray(v) ? v : [v]) as z.infer<T>[]);

/** A missing `id` says what to send, rather than zod's "Invalid input". */
const ID_REQUIRED = 'the id query parameter is required: …/docs?id=users/1-A';
// A preprocess (not a refinement of unknown) so that the OpenAPI document shows `schema`, not "anything".
const RequiredId = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value, ctx) => {
    if (value === undefined) ctx.addIssue({ code: 'custom', message: ID_REQUIRED });
    return value;
  }, schema);

const GetQuery = validated(
  z.object({
    id: RequiredId(
      oneOrMany(DocumentIdSchema).refine((ids) => ids.length <= 1024, 'ask for at most 1024 ids at once'),
    ),
    include: oneOrMany(z.string().min(1).max(512)).optional(),
  }),
  'query string',
);
const SingleIdQuery = validated(z.object({ id: RequiredId(DocumentIdSchema) }), 'query string');
const DocumentBody = validated(DocumentInputSchema, 'document (it must be a JSON object)');

const GET_ADVICE =
  'ask for fewer ids (or fewer includes) per request, or read many documents with GET /databases/{db}/streams/docs';

/** `GET/PUT/DELETE /databases/{db}/docs?id=…` */
export function documentRoutes(fastify: FastifyInstance, context: RouteContext): void {
  const app = fastify.withTypeProvider<RequestParts>();
  app.get(
    '/databases/:db/docs',
    {
      schema: {
        summary: 'Load documents by id, with the documents their `include` paths reference',
        params: DatabaseParams,
        querystring: GetQuery,
        response: {
          200: { description: 'Null for an id not found', schema: GetDocumentsResponseSchema },
          304: { description: 'Not modified: the If-None-Match tag is still current' },
        },
      },
    },
    (request, reply) => getDocuments(context, request, reply),
  );

  const single = { params: DatabaseParams, querystring: SingleIdQuery };
  app.put(
    '/databases/:db/docs',
    {
      schema: {
        summary: 'Store a document (If-Match: conditional)',
        ...single,
        body: DocumentBody,
        response: { 201: { description: 'Stored', schema: PutDocumentResponseSchema } },
      },
    },
    async (request, reply) => {
      const db = databaseOf(context, request);
      const { id } = request.query;
      const document = request.body;
      const expected = expectedFromIfMatch(request.headers['if-match']);
      const [result] = await db.batch([{ Type: 'PUT', Id: id, Document: document, ChangeVector: expected }]);
      reply.code(201).header('etag', `"${result!.ChangeVector}"`);
      return {
        Id: result!.Id,
        ChangeVector: result!.ChangeVector,
        Collection: result!.Collection,
        LastModified: result!.LastModified,
      };
    },
  );

  app.delete(
    '/databases/:db/docs',
    {
      schema: {
        summary: 'Delete a document (If-Match: conditional)',
        ...single,
        response: { 204: { description: 'Deleted, or there was none' } },
      },
    },
    async (request, reply) => {
      const db = databaseOf(context, request);
      const { id } = request.query;
      await db.batch([
        { Type: 'DELETE', Id: id, ChangeVector: expectedFromIfMatch(request.headers['if-match']) },
      ]);
      return reply.code(204).send();
    },
  );
}

function getDocuments(context: RouteContext, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const db = databaseOf(context, request);
  const { id: ids, include = [] } = request.query as Parsed<typeof GetQuery>;
  const tag = entityTagFor(db, ids, include);
  reply.header('etag', tag);
  if (ifNoneMatch(request.headers['if-none-match'], tag)) return reply.code(304).send();

  // Each answer position is counted (an id asked for twice is in the answer twice), but each document is
  // read once: an id repeated a thousand times costs one read, and the budget refuses the answer long
  // before its text would be built.
  const budget = new ResponseBudget(context.config.maxResponseBytes, GET_ADVICE);
  const loaded = new Map<string, LoadedDocument | null>();
  const results = ids.map((id) => {
    const key = id.toLowerCase();
    let doc = loaded.get(key);
    if (doc === undefined) {
      doc = db.get(id);
      loaded.set(key, doc);
    }
    budget.add(doc?.json.length ?? 4);
    return doc;
  });
  if (ids.length === 1 && include.length === 0 && results[0] === null) {
    throw new RookeryError('DocumentNotFound', `Document ${ids[0]} does not exist`, { id: ids[0] });
  }
  const includes = new Map<string, string | null>();
  if (include.length > 0) {
    for (const doc of loaded.values()) {
      if (!doc) continue;
      const parsed: unknown = JSON.parse(doc.json);
      for (const path of include) {
        for (const ref of referencedIds(parsed, path)) {
          const key = ref.toLowerCase();
          if (loaded.has(key) || includes.has(key)) continue;
          const json = db.get(ref)?.json ?? null;
          budget.add((json?.length ?? 4) + key.length);
          includes.set(key, json);
        }
      }
    }
  }
  // Documents are spliced in as stored JSON text: no parse/serialise round trip on the read path.
  let body = `{"Results":[${results.map((d) => d?.json ?? 'null').join(',')}],"Includes":{`;
  let first = true;
  for (const [key, json] of includes) {
    body += `${first ? '' : ','}${JSON.stringify(key)}:${json ?? 'null'}`;
    first = false;
  }
  body += '}}';
  return reply.type(JSON_CONTENT_TYPE).send(body);
}

/**
 * Without includes the tag is the documents' change vectors, read without
 * their bodies. Included documents are only known after reading the bodies,
 * so with includes the tag is the database's last etag: any write revalidates.
 */
function entityTagFor(db: Database, ids: readonly string[], include: readonly string[]): string {
  if (include.length > 0) return entityTag([db.databaseId, db.lastEtag, ...include]);
  return entityTag(ids.map((id) => db.changeVectorOf(id)));
}
