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

export interface DatabaseStats {
  DatabaseName: string;
  DatabaseId: string;
  CountOfDocuments: number;
  CountOfTombstones: number;
  Collections: Record<string, number>;
  LastDocEtag: number;
  SizeOnDisk: { Bytes: number; Humane: string };
  /** Present when the database is mirrored to the network disk. */
  Mirror?: MirrorStats;
}

/** A mirrored database's shipping state: how far behind the mirror is, in time, bytes and transactions. */
export interface MirrorStats {
  Mode: 'async' | 'sync';
  /**
   * `starting` until the chain on the mirror is known; `failing` while the mirror refuses writes (retried);
   * `fenced` once a newer placement epoch writes the mirror (this owner ships and acknowledges nothing more).
   */
  State: 'starting' | 'streaming' | 'failing' | 'fenced' | 'closed';
  Generation: string | null;
  /** The last transaction committed locally. */
  Txid: number;
  /** The last transaction a restore from the mirror brings back. */
  MirroredTxid: number;
  /** Age of the oldest transaction not yet on the mirror (0 when none is waiting). */
  LagMs: number;
  /** Bytes of transactions not yet on the mirror. */
  LagBytes: number;
  LagTransactions: number;
  LastSnapshot: { Txid: number; At: string } | null;
  LastError: string | null;
}

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

export interface HiLoResponse {
  Prefix: string;
  Low: number;
  High: number;
  LastSize: number;
  ServerTag: string;
}
