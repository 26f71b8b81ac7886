import type { Database } from '@rookery/engine';
import { DocumentIdSchema, DocumentInputSchema, RookeryError, referencedIds } from '@rookery/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { entityTag, expectedFromIfMatch, ifNoneMatch } from '../http/etag.js';
import { databaseOf, parseWith, type RouteContext } from './context.js';

const oneOrMany = <T extends z.ZodType>(item: T) =>
  z.union([item, z.array(item)]).transform((v) => (Array.isArray(v) ? v : [v]) as z.infer<T>[]);

const GetQuerySchema = z.object({
  id: oneOrMany(DocumentIdSchema).refine((ids) => ids.length <= 1024, 'ask for at most 1024 ids at once'),
  include: oneOrMany(z.string().min(1).max(512)).optional(),
});
const SingleIdQuerySchema = z.object({ id: DocumentIdSchema });

/** `GET/PUT/DELETE /databases/{db}/docs?id=…` */
export function documentRoutes(app: FastifyInstance, context: RouteContext): void {
  app.get('/databases/:db/docs', (request, reply) => getDocuments(context, request, reply));

  app.put('/databases/:db/docs', async (request, reply) => {
    const db = databaseOf(context, request);
    const { id } = parseWith(SingleIdQuerySchema, request.query, 'query string');
    const document = parseWith(DocumentInputSchema, request.body, 'document (it must be a JSON object)');
    const expected = expectedFromIfMatch(request.headers['if-match']);
    const [result] = await db.batch([{ Type: 'PUT', Id: id, Document: document, ChangeVector: expected }]);
    reply.code(201).header('etag', `"${result!.ChangeVector}"`);
    return {
      Id: result!.Id,
      ChangeVector: result!.ChangeVector,
      Collection: result!.Collection,
      LastModified: result!.LastModified,
    };
  });

  app.delete('/databases/:db/docs', async (request, reply) => {
    const db = databaseOf(context, request);
    const { id } = parseWith(SingleIdQuerySchema, request.query, 'query string');
    await db.batch([
      { Type: 'DELETE', Id: id, ChangeVector: expectedFromIfMatch(request.headers['if-match']) },
    ]);
    return reply.code(204).send();
  });
}

function getDocuments(context: RouteContext, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const db = databaseOf(context, request);
  const { id: ids, include = [] } = parseWith(GetQuerySchema, request.query, 'query string');
  const tag = entityTagFor(db, ids, include);
  reply.header('etag', tag);
  if (ifNoneMatch(request.headers['if-none-match'], tag)) return reply.code(304).send();

  const results = ids.map((id) => db.get(id));
  if (ids.length === 1 && include.length === 0 && results[0] === null) {
    throw new RookeryError('DocumentNotFound', `Document ${ids[0]} does not exist`, { id: ids[0] });
  }
  const includes = new Map<string, string | null>();
  if (include.length > 0) {
    const requested = new Set(ids.map((id) => id.toLowerCase()));
    for (const doc of results) {
      if (!doc) continue;
      const parsed: unknown = JSON.parse(doc.json);
      for (const path of include) {
        for (const ref of referencedIds(parsed, path)) {
          const key = ref.toLowerCase();
          if (requested.has(key) || includes.has(key)) continue;
          includes.set(key, db.get(ref)?.json ?? null);
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
  return reply.type('application/json; charset=utf-8').send(body);
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
