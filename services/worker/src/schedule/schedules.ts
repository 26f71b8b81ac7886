// When each database is backed up. Every mirrored database gets the default schedule from the
// worker's configuration; a schedule file (ROOKERY_BACKUP_SCHEDULE_FILE) can give a tenant, or one
// database, its own:
//
//   { "databases": [
//       { "tenant": "acme", "database": "orders", "everyMinutes": 15, "fullEveryHours": 24 },
//       { "tenant": "acme", "everyMinutes": 0 } ] }         ← 0: acme's other databases are not scheduled
//
// A file rather than a control-store table: only the workers read it, it needs no migration on
// both control-store engines, and the mirror itself already says which databases exist.
import fs from 'node:fs';
import { DatabaseNameSchema } from '@rookery/protocol';
import { z } from 'zod';

export interface BackupSchedule {
  /** One backup every this many ms (0: not scheduled). */
  everyMs: number;
  /** Full when the last full backup is older than this (0: always full). */
  fullEveryMs: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const ScheduleEntrySchema = z
  .object({
    tenant: z.string().min(1),
    /** Absent: every database of the tenant not named in an entry of its own. */
    database: DatabaseNameSchema.optional(),
    everyMinutes: z.number().min(0),
    fullEveryHours: z.number().min(0).optional(),
  })
  .strict();

export const ScheduleFileSchema = z.object({ databases: z.array(ScheduleEntrySchema) }).strict();
export type ScheduleFile = z.infer<typeof ScheduleFileSchema>;

export class Schedules {
  private readonly byDatabase = new Map<string, BackupSchedule>();
  private readonly byTenant = new Map<string, BackupSchedule>();

  constructor(
    private readonly fallback: BackupSchedule,
    file: ScheduleFile = { databases: [] },
  ) {
    for (const entry of file.databases) {
      const schedule = {
        everyMs: entry.everyMinutes * MINUTE,
        fullEveryMs: (entry.fullEveryHours ?? fallback.fullEveryMs / HOUR) * HOUR,
      };
      if (entry.database) this.byDatabase.set(key(entry.tenant, entry.database), schedule);
      else this.byTenant.set(entry.tenant, schedule);
    }
  }

  /** Reads and checks a schedule file; a bad one stops the worker with a message saying what is wrong. */
  static load(fallback: BackupSchedule, file: string | undefined): Schedules {
    if (!file) return new Schedules(fallback);
    let parsed: unknown;
    try {
      parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (error) {
      throw new Error(`The backup schedule file ${file} cannot be read as JSON: ${(error as Error).message}`);
    }
    const result = ScheduleFileSchema.safeParse(parsed);
    if (!result.success) {
      throw new Error(`The backup schedule file ${file} is not valid: ${z.prettifyError(result.error)}`);
    }
    return new Schedules(fallback, result.data);
  }

  for(tenant: string, database: string): BackupSchedule {
    return this.byDatabase.get(key(tenant, database)) ?? this.byTenant.get(tenant) ?? this.fallback;
  }
}

const key = (tenant: string, database: string) => `${tenant}/${database.toLowerCase()}`;
