// The server's WebSocket frames (docs/live-data.md), checked with zod as they arrive. Objects are loose:
// a field the server adds later does not break an older client.
import { z } from 'zod';

const DocumentChangeSchema = z.looseObject({
  Id: z.string(),
  // Present for every change per docs/live-data.md; tolerated absent so a delete of an unknown document
  // does not tear down the connection.
  Collection: z.string().nullable().optional(),
  ChangeVector: z.string().nullable().optional(),
  Type: z.enum(['Put', 'Delete']),
  Etag: z.number(),
});
export type DocumentChange = z.infer<typeof DocumentChangeSchema>;

const IndexChangeSchema = z.looseObject({
  Name: z.string(),
  Type: z.enum(['BatchCompleted', 'IndexAdded', 'IndexRemoved']),
  Etag: z.number(),
});
export type IndexChange = z.infer<typeof IndexChangeSchema>;

const ErrorFrameSchema = z.looseObject({
  Type: z.literal('Error'),
  Code: z.string(),
  Message: z.string(),
  CommandId: z.number().optional(),
});

export const ChangesFrameSchema = z.discriminatedUnion('Type', [
  z.looseObject({ Type: z.literal('Confirm'), CommandId: z.number() }),
  z.looseObject({ Type: z.literal('DocumentChange'), Value: DocumentChangeSchema }),
  z.looseObject({ Type: z.literal('IndexChange'), Value: IndexChangeSchema }),
  ErrorFrameSchema,
]);
export type ChangesFrame = z.infer<typeof ChangesFrameSchema>;

const SubscriptionItemSchema = z.looseObject({
  Id: z.string(),
  ChangeVector: z.string(),
  Document: z.record(z.string(), z.unknown()),
});

export const SubscriptionFrameSchema = z.discriminatedUnion('Type', [
  z.looseObject({ Type: z.literal('Connected'), Name: z.string(), LastAcknowledgedEtag: z.number() }),
  z.looseObject({
    Type: z.literal('Batch'),
    BatchId: z.number().int(),
    LastEtag: z.number(),
    Items: z.array(SubscriptionItemSchema),
  }),
  ErrorFrameSchema,
]);
export type SubscriptionFrame = z.infer<typeof SubscriptionFrameSchema>;

/** A text frame parsed against a schema; null (and the reason) when it is not JSON or not that shape. */
export function parseFrame<S extends z.ZodType>(
  schema: S,
  data: unknown,
): { ok: true; frame: z.infer<S> } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(String(data));
  } catch {
    return { ok: false, reason: 'a frame that is not JSON' };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, frame: parsed.data };
  return { ok: false, reason: `an unexpected frame: ${parsed.error.issues[0]?.message ?? 'invalid'}` };
}
