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
