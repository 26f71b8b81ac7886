// Databases as RavenDB's clients create and delete them (CreateDatabaseOperation: `PUT /admin/databases?name=`
// with a DatabaseRecord; DeleteDatabasesOperation: `DELETE /admin/databases` with `{DatabaseNames, HardDelete}`),
// read into Rookery's create and delete. What a Rookery database cannot be is refused by name, never dropped.
import { z } from 'zod';
import { DatabaseNameSchema } from './database.js';

/** The DatabaseRecord fields Rookery can honour; any other key is refused by name (the schema is strict). */
export const RavenDatabaseRecordSchema = z
  .object({
    DatabaseName: DatabaseNameSchema,
    Disabled: z
      .literal(false, {
        message: 'a Rookery database cannot be created disabled; create it, and stop writing to it',
      })
      .nullish(),
    Encrypted: z
      .literal(false, {
        message:
          "Rookery does not encrypt a database with a key of the client's; every tenant's files are encrypted at rest by the platform",
      })
      .nullish(),
    Settings: z
      .record(z.string(), z.string().nullable())
      .refine((settings) => Object.keys(settings).length === 0, {
        message:
          "RavenDB's server settings have no meaning in Rookery: send none (Rookery's limits are its own configuration)",
      })
      .nullish(),
  })
  .strict();
export type RavenDatabaseRecord = z.infer<typeof RavenDatabaseRecordSchema>;

/** True for a body in RavenDB's DatabaseRecord shape (as opposed to Rookery's `{"Name"}`). */
export function isRavenDatabaseRecord(body: unknown): boolean {
  return typeof body === 'object' && body !== null && 'DatabaseName' in body;
}

/** `DELETE /admin/databases` body of RavenDB's DeleteDatabasesOperation. */
export const RavenDeleteDatabasesSchema = z
  .object({
    DatabaseNames: z.array(DatabaseNameSchema).min(1).max(100),
    HardDelete: z.literal(true, {
      message:
        'Rookery deletes a database with its files, at once: send HardDelete: true (a soft delete, which keeps the files, does not exist here)',
    }),
    FromNodes: z
      .array(z.string())
      .max(0, { message: 'a Rookery database lives on one node: delete it whole, without FromNodes' })
      .nullish(),
    TimeToWaitForConfirmation: z.unknown().optional(),
  })
  .strict();
export type RavenDeleteDatabases = z.infer<typeof RavenDeleteDatabasesSchema>;
