import { z } from 'zod';

/** Database names: letters, digits, `_`, `-`, `.`; case-insensitive; no leading dot. */
export const DatabaseNameSchema = z
  .string()
  .min(1, 'a database name cannot be empty')
  .max(64, 'a database name must be at most 64 characters')
  .regex(
    /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/,
    'a database name may use letters, digits, "_", "-" and "." (not first)',
  );

export const CreateDatabaseRequestSchema = z.object({ Name: DatabaseNameSchema }).strict();
export type CreateDatabaseRequest = z.infer<typeof CreateDatabaseRequestSchema>;

/** A mirrored database's shipping state: how far behind the mirror is, in time, bytes and transactions. */
export const MirrorStatsSchema = z.object({
  Mode: z.enum(['async', 'sync']),
  /**
   * `starting` until the chain on the mirror is known; `failing` while the mirror refuses writes (retried);
   * `fenced` once a newer placement epoch writes the mirror (this owner ships and acknowledges nothing more).
   */
  State: z.enum(['starting', 'streaming', 'failing', 'fenced', 'closed']),
  Generation: z.string().nullable(),
  /** The last transaction committed locally. */
  Txid: z.number().int(),
  /** The last transaction a restore from the mirror brings back. */
  MirroredTxid: z.number().int(),
  /** Age of the oldest transaction not yet on the mirror (0 when none is waiting). */
  LagMs: z.number(),
  /** Bytes of transactions not yet on the mirror. */
  LagBytes: z.number().int(),
  LagTransactions: z.number().int(),
  LastSnapshot: z.object({ Txid: z.number().int(), At: z.string() }).nullable(),
  LastError: z.string().nullable(),
});
export type MirrorStats = z.infer<typeof MirrorStatsSchema>;

/** `GET /databases/{db}/stats` response. */
export const DatabaseStatsSchema = z.object({
  DatabaseName: z.string(),
  DatabaseId: z.string(),
  CountOfDocuments: z.number().int(),
  CountOfTombstones: z.number().int(),
  Collections: z.record(z.string(), z.number().int()),
  LastDocEtag: z.number().int(),
  SizeOnDisk: z.object({ Bytes: z.number().int(), Humane: z.string() }),
  /** Present when the database is mirrored to the network disk. */
  Mirror: MirrorStatsSchema.optional(),
});
export type DatabaseStats = z.infer<typeof DatabaseStatsSchema>;

/** `GET /databases/{db}/hilo/next` query string. */
export const HiLoRequestSchema = z.object({
  tag: z
    .string()
    .min(1)
    .max(256)
    .regex(/^[^/|\s]+$/, 'a HiLo tag is a collection prefix such as "users", without "/" or "|"'),
  lastBatchSize: z.coerce.number().int().min(0).max(1_000_000).optional(),
});
export type HiLoRequest = z.infer<typeof HiLoRequestSchema>;

/** `GET /databases/{db}/hilo/next` response. */
export const HiLoResponseSchema = z.object({
  Prefix: z.string(),
  Low: z.number().int(),
  High: z.number().int(),
  LastSize: z.number().int(),
  ServerTag: z.string(),
});
export type HiLoResponse = z.infer<typeof HiLoResponseSchema>;

/** `GET /databases` response: the tenant's databases' names, sorted. */
export const DatabaseListResponseSchema = z.object({ Databases: z.array(z.string()) });
export type DatabaseListResponse = z.infer<typeof DatabaseListResponseSchema>;
