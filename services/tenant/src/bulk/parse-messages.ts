// Messages between the request thread and bulk insert's parse thread. Both
// ends are this process's own code, so a chunk of prepared documents is checked
// for its shape only: validating 5,000 documents again on the request thread
// would spend there the CPU the parse thread exists to take away.
import { type ErrorCode, ErrorCodes, type PreparedChunk } from '@rookery/protocol';
import { z } from 'zod';

const session = z.number().int().nonnegative();
const chunk = z.custom<PreparedChunk>(
  (value) => typeof value === 'object' && value !== null && Array.isArray((value as PreparedChunk).ids),
  'a chunk of prepared documents',
);

export const ToParseThreadSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('open'), session, maxDocumentBytes: z.number().int().positive() }),
  z.object({ type: z.literal('data'), session, bytes: z.instanceof(Uint8Array) }),
  z.object({ type: z.literal('end'), session }),
  z.object({ type: z.literal('close'), session }),
]);
export type ToParseThread = z.infer<typeof ToParseThreadSchema>;

export const FromParseThreadSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('chunk'),
    session,
    chunk,
  }),
  /** The parse thread is done with this many of the bytes it was sent: the request thread may read more. */
  z.object({ type: z.literal('consumed'), session, bytes: z.number().int().nonnegative() }),
  z.object({ type: z.literal('ended'), session }),
  z.object({
    type: z.literal('failed'),
    session,
    /** The lines before the bad one that no chunk carried yet: stored with the failure's report. */
    chunk,
    error: z.object({
      code: z.custom<ErrorCode>((code) => typeof code === 'string' && Object.hasOwn(ErrorCodes, code)),
      message: z.string(),
      details: z.record(z.string(), z.unknown()),
    }),
  }),
]);
export type FromParseThread = z.infer<typeof FromParseThreadSchema>;
