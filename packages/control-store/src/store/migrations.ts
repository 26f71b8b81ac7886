// The control store's schema, as migrations kept in code (no migration files to
// ship or find at run time) and applied with Kysely's Migrator on every open.
import { type Kysely, sql } from 'kysely';
import { type Migration, type MigrationProvider, Migrator } from 'kysely/migration';
import type { ControlSchema } from './schema.js';

/**
 * Migrations in code, in name order. A released migration is never edited:
 * a change of schema is a new entry. They must stay portable (SQLite and
 * PostgreSQL): Kysely's schema builder with text / bigint columns only.
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_control_store': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('tenants')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('requests_per_second', 'bigint', (c) => c.notNull())
        .addColumn('storage_bytes', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('databases')
        .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('name_key', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('databases_pk', ['tenant_id', 'name_key'])
        .execute();

      await db.schema
        .createTable('placements')
        .addColumn('tenant_id', 'text', (c) => c.primaryKey().references('tenants.id').onDelete('cascade'))
        .addColumn('host_id', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('principals')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.references('tenants.id').onDelete('cascade'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('principals_tenant').on('principals').columns(['tenant_id']).execute();

      await db.schema
        .createTable('certificates')
        .addColumn('serial', 'text', (c) => c.primaryKey())
        .addColumn('thumbprint', 'text', (c) => c.notNull().unique())
        .addColumn('principal_id', 'text', (c) => c.notNull())
        .addColumn('not_before', 'bigint', (c) => c.notNull())
        .addColumn('not_after', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .addColumn('pem', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('certificates_principal')
        .on('certificates')
        .columns(['principal_id'])
        .execute();
      await db.schema
        .createIndex('certificates_revoked')
        .on('certificates')
        .columns(['revoked_at'])
        .execute();

      await db.schema
        .createTable('totp_secrets')
        .addColumn('principal_id', 'text', (c) =>
          c.primaryKey().references('principals.id').onDelete('cascade'),
        )
        .addColumn('sealed', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('totp_steps')
        .addColumn('principal_id', 'text', (c) => c.notNull().references('principals.id').onDelete('cascade'))
        .addColumn('step', 'bigint', (c) => c.notNull())
        .addColumn('claimed_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('totp_steps_pk', ['principal_id', 'step'])
        .execute();

      await db.schema
        .createTable('two_factor_sessions')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('principal_id', 'text', (c) => c.notNull().references('principals.id').onDelete('cascade'))
        .addColumn('thumbprint', 'text', (c) => c.notNull())
        .addColumn('binding', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('two_factor_sessions_thumbprint')
        .on('two_factor_sessions')
        .columns(['thumbprint', 'expires_at'])
        .execute();
      await db.schema
        .createIndex('two_factor_sessions_principal')
        .on('two_factor_sessions')
        .columns(['principal_id'])
        .execute();

      // No foreign key: a metering flush must never fail because a tenant was
      // deleted a moment before; deleteTenant removes the rows itself.
      await db.schema
        .createTable('usage_minutes')
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('minute', 'bigint', (c) => c.notNull())
        .addColumn('requests', 'bigint', (c) => c.notNull())
        .addColumn('bytes_in', 'bigint', (c) => c.notNull())
        .addColumn('bytes_out', 'bigint', (c) => c.notNull())
        .addColumn('work_units', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('usage_minutes_pk', ['tenant_id', 'minute'])
        .execute();
    },
  },
  // TOTP attempts were counted in each gateway's memory: a burst raced past the
  // count, and every gateway allowed its own. One row per person, updated by
  // one atomic statement per attempt, counts them for all gateways.
  '0002_two_factor_attempts': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('two_factor_attempts')
        .addColumn('principal_id', 'text', (c) =>
          c.primaryKey().references('principals.id').onDelete('cascade'),
        )
        .addColumn('window_started_at', 'bigint', (c) => c.notNull())
        .addColumn('attempts', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  // The fleet: hosts hold leases with epochs, placements carry epochs (fleet.ts).
  // Placements made before (never routed on) get epoch 1 and host epoch 0, which
  // no lease has: the reaper re-places them once their host is past the grace.
  '0003_fleet': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('hosts')
        .addColumn('host_id', 'text', (c) => c.primaryKey())
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('capacity', 'bigint', (c) => c.notNull())
        .addColumn('epoch', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('acquired_at', 'bigint', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .execute();
      // SQLite adds one column per ALTER TABLE.
      await db.schema
        .alterTable('placements')
        .addColumn('epoch', 'bigint', (c) => c.notNull().defaultTo(1))
        .execute();
      await db.schema
        .alterTable('placements')
        .addColumn('host_epoch', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      // A host's load is counted on every placement.
      await db.schema.createIndex('placements_host').on('placements').columns(['host_id']).execute();
    },
  },
  // Several gateways (gateways.ts): each one's heartbeat, with how many requests each tenant sent it in its
  // last interval, so that they share a tenant's rate by where its traffic arrives; and the usage flushes
  // already added, so that a flush retried after an answer lost on the way back is not counted twice.
  '0004_gateways': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('gateways')
        .addColumn('gateway_id', 'text', (c) => c.primaryKey())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('gateway_demand')
        .addColumn('gateway_id', 'text', (c) =>
          c.notNull().references('gateways.gateway_id').onDelete('cascade'),
        )
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('requests', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('gateway_demand_pk', ['gateway_id', 'tenant_id'])
        .execute();
      await db.schema
        .createIndex('gateway_demand_tenant')
        .on('gateway_demand')
        .columns(['tenant_id'])
        .execute();
      await db.schema
        .createTable('usage_flushes')
        .addColumn('flush_id', 'text', (c) => c.primaryKey())
        .addColumn('added_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('usage_flushes_added').on('usage_flushes').columns(['added_at']).execute();
    },
  },
  // A person's authenticator secret a tenant admin set up for the person to collect (the console's sign-in
  // page shows its QR code once): when the delivery was asked for, null once taken or when none was.
  '0005_totp_delivery': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('totp_secrets').addColumn('delivery_pending_since', 'bigint').execute();
    },
  },
};

class InCodeMigrations implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return { ...MIGRATIONS };
  }
}

/**
 * Brings the schema up to date; running it again is a no-op. PostgreSQL runs it
 * in one transaction under an advisory lock (Kysely's migrator); the SQLite
 * opener wraps it in BEGIN IMMEDIATE so two processes opening a new file at
 * once take turns.
 */
export async function migrateToLatest(db: Kysely<ControlSchema>): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: new InCodeMigrations(),
    migrationTableName: 'control_migrations',
    migrationLockTableName: 'control_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `The control store's schema could not be brought up to date${failed ? ` (migration ${failed})` : ''}: ${reason}`,
      { cause: error },
    );
  }
}

/** Used by tests to prove the schema is really there (and by nothing else). */
export async function appliedMigrations(db: Kysely<ControlSchema>): Promise<string[]> {
  const rows = await sql<{ name: string }>`select name from control_migrations order by name`.execute(db);
  return rows.rows.map((r) => r.name);
}
