// The ControlStore, written once with Kysely for both SQLite and PostgreSQL:
// every query below runs unchanged on either dialect (portable SQL only:
// INSERT … ON CONFLICT, RETURNING, INSERT … SELECT with explicit casts).
// sqlite.ts and postgres.ts only open a connection and hand it here.
//
// Multi-statement writes are batches: Kysely builds and compiles the queries,
// and the dialect's runBatch executes them in one transaction. SQLite runs a
// batch synchronously under BEGIN IMMEDIATE, so no SQLite lock is ever held
// across an await: two stores on one file in the same process cannot wait on
// each other, and other processes just wait their turn (busy_timeout).
import { randomUUID } from 'node:crypto';
import { DatabaseNameSchema, RookeryError, TENANT_ID_RULE, TenantIdSchema } from '@rookery/protocol';
import type { CompiledQuery, Kysely, Selectable } from 'kysely';
import { z } from 'zod';
import { parseInput as parse } from '../input.js';
import type { ControlStore, CreatePrincipalInput, CreateTenantInput } from './control-store.js';
import { type FleetClock, FleetRecords } from './fleet.js';
import { GatewayRecords } from './gateways.js';
import type { CertificatesTable, ControlSchema, PrincipalsTable, TenantsTable } from './schema.js';
import { bigint, brokenConstraint, corrupt, nullableBigint, principalNotFound, Time, text } from './sql.js';
import { TwoFactorRecords } from './two-factor.js';
import {
  type CertificateRecord,
  CertificateRecordSchema,
  type DatabaseRecord,
  DEFAULT_QUOTA,
  type PageRequest,
  type Principal,
  PrincipalKindSchema,
  type Quota,
  QuotaSchema,
  type RevokedCertificate,
  RoleSchema,
  type Tenant,
} from './types.js';
import { UsageRecords } from './usage.js';

const PrincipalNameSchema = z.string().trim().min(1, 'a name cannot be empty').max(200);
const TenantNameSchema = z.string().trim().min(1, 'a tenant name cannot be empty').max(200);
const QuotaPatchSchema = z
  .object({
    requestsPerSecond: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
    storageBytes: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
  })
  .strict();

function tenantId(id: string): string {
  const result = TenantIdSchema.safeParse(id);
  if (!result.success) {
    throw new RookeryError('InvalidTenantId', `"${id}" is not a valid tenant id: use ${TENANT_ID_RULE}.`);
  }
  return result.data;
}

function databaseName(name: string): string {
  const result = DatabaseNameSchema.safeParse(name);
  if (!result.success) {
    throw new RookeryError(
      'InvalidDatabaseName',
      `"${name}" is not a valid database name: ${result.error.issues[0]?.message ?? 'invalid'}.`,
    );
  }
  return result.data;
}

const tenantNotFound = (id: string) =>
  new RookeryError(
    'TenantNotFound',
    `There is no tenant "${id}"; list tenants with \`rookery tenant list\`.`,
  );
function toTenant(row: Selectable<TenantsTable>): Tenant {
  const quota = QuotaSchema.safeParse({
    requestsPerSecond: row.requests_per_second,
    storageBytes: row.storage_bytes,
  });
  if (!quota.success) throw corrupt('tenant quota', row.id, quota.error);
  return { id: row.id, name: row.name, createdAt: row.created_at, quota: quota.data };
}

function toPrincipal(row: Selectable<PrincipalsTable>): Principal {
  let role: unknown;
  try {
    role = JSON.parse(row.role);
  } catch (error) {
    throw corrupt('principal role', row.id, error);
  }
  const parsedRole = RoleSchema.safeParse(role);
  if (!parsedRole.success) throw corrupt('principal role', row.id, parsedRole.error);
  const kind = PrincipalKindSchema.safeParse(row.kind);
  if (!kind.success) throw corrupt('principal kind', row.id, kind.error);
  return {
    id: row.id,
    tenantId: row.tenant_id,
    kind: kind.data,
    name: row.name,
    role: parsedRole.data,
    createdAt: row.created_at,
  };
}

function toCertificate(row: Selectable<CertificatesTable>): CertificateRecord {
  return {
    serial: row.serial,
    thumbprint: row.thumbprint,
    principalId: row.principal_id,
    notBefore: row.not_before,
    notAfter: row.not_after,
    revokedAt: row.revoked_at,
    pem: row.pem,
  };
}

/** Runs compiled writes in one transaction, in order; answers each one's affected row count. */
export type BatchRunner = (queries: readonly CompiledQuery[]) => Promise<number[]>;

export interface KyselyControlStoreOptions {
  dialect: 'sqlite' | 'postgres';
  /** Default: a Kysely transaction (right for PostgreSQL's pool). */
  runBatch?: BatchRunner;
  /** Called once by close(), after Kysely is destroyed. */
  onClose?: () => void | Promise<void>;
  now?: () => number;
  /** Tests only: the fleet's time instead of the database's clock (fleet.ts says why). */
  fleetClock?: FleetClock;
}

export class KyselyControlStore implements ControlStore {
  readonly dialect: 'sqlite' | 'postgres';
  private readonly now: () => number;
  private closed: Promise<void> | null = null;

  constructor(
    /** Exposed for tests and migrations only; everything else goes through the methods. */
    readonly db: Kysely<ControlSchema>,
    private readonly options: KyselyControlStoreOptions,
  ) {
    this.dialect = options.dialect;
    this.now = options.now ?? Date.now;
    this.runBatch =
      options.runBatch ??
      ((queries) =>
        db.transaction().execute(async (trx) => {
          const counts: number[] = [];
          for (const query of queries)
            counts.push(Number((await trx.executeQuery(query)).numAffectedRows ?? 0));
          return counts;
        }));
    const twoFactor = new TwoFactorRecords(db, this.now);
    this.setTotpSecret = twoFactor.setTotpSecret.bind(twoFactor);
    this.getTotpSecret = twoFactor.getTotpSecret.bind(twoFactor);
    this.clearTotpSecret = twoFactor.clearTotpSecret.bind(twoFactor);
    this.hasTotpDelivery = twoFactor.hasTotpDelivery.bind(twoFactor);
    this.takeTotpDelivery = twoFactor.takeTotpDelivery.bind(twoFactor);
    this.claimTotpStep = twoFactor.claimTotpStep.bind(twoFactor);
    this.takeTwoFactorAttempt = twoFactor.takeTwoFactorAttempt.bind(twoFactor);
    this.clearTwoFactorAttempts = twoFactor.clearTwoFactorAttempts.bind(twoFactor);
    this.createTwoFactorSession = twoFactor.createTwoFactorSession.bind(twoFactor);
    this.findTwoFactorSession = twoFactor.findTwoFactorSession.bind(twoFactor);
    this.findCertificateSession = twoFactor.findCertificateSession.bind(twoFactor);
    this.deleteTwoFactorSession = twoFactor.deleteTwoFactorSession.bind(twoFactor);
    this.deleteTwoFactorSessions = twoFactor.deleteTwoFactorSessions.bind(twoFactor);
    const fleet = new FleetRecords(db, options.dialect, this.runBatch, options.fleetClock);
    this.acquireLease = fleet.acquireLease.bind(fleet);
    this.renewLease = fleet.renewLease.bind(fleet);
    this.getHost = fleet.getHost.bind(fleet);
    this.listHosts = fleet.listHosts.bind(fleet);
    this.drainHost = fleet.drainHost.bind(fleet);
    this.activateHost = fleet.activateHost.bind(fleet);
    this.retireHost = fleet.retireHost.bind(fleet);
    this.placeTenant = fleet.placeTenant.bind(fleet);
    this.getPlacement = fleet.getPlacement.bind(fleet);
    this.listPlacements = fleet.listPlacements.bind(fleet);
    this.movePlacement = fleet.movePlacement.bind(fleet);
    this.relocatePlacement = fleet.relocatePlacement.bind(fleet);
    this.reclaimPlacements = fleet.reclaimPlacements.bind(fleet);
    this.tenantsToReplace = fleet.tenantsToReplace.bind(fleet);
    const usage = new UsageRecords(db, options.dialect, this.runBatch, options.fleetClock);
    this.addUsage = usage.addUsage.bind(usage);
    this.usage = usage.usage.bind(usage);
    const gateways = new GatewayRecords(db, options.dialect, this.runBatch, options.fleetClock);
    this.heartbeatGateway = gateways.heartbeatGateway.bind(gateways);
    this.leaveGateway = gateways.leaveGateway.bind(gateways);
  }

  private readonly runBatch: BatchRunner;

  private batch(queries: readonly { compile(): CompiledQuery }[]): Promise<number[]> {
    return this.runBatch(queries.map((q) => q.compile()));
  }

  // ── tenants ──────────────────────────────────────────────────────────────

  async createTenant(input: CreateTenantInput): Promise<Tenant> {
    const id = tenantId(input.id);
    const name = parse(TenantNameSchema, input.name, 'tenant name');
    const patch = parse(QuotaPatchSchema, input.quota ?? {}, 'quota');
    const quota: Quota = { ...DEFAULT_QUOTA, ...definedOnly(patch) };
    const row: TenantsTable = {
      id,
      name,
      created_at: this.now(),
      requests_per_second: quota.requestsPerSecond,
      storage_bytes: quota.storageBytes,
    };
    const result = await this.db
      .insertInto('tenants')
      .values(row)
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    if (Number(result.numInsertedOrUpdatedRows ?? 0) === 0) {
      throw new RookeryError('TenantAlreadyExists', `A tenant "${id}" already exists; choose another id.`);
    }
    return toTenant(row);
  }

  async getTenant(id: string): Promise<Tenant | null> {
    const row = await this.db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toTenant(row) : null;
  }

  async listTenants(): Promise<Tenant[]> {
    const rows = await this.db.selectFrom('tenants').selectAll().orderBy('id').execute();
    return rows.map(toTenant);
  }

  async updateQuota(id: string, quota: Partial<Quota>): Promise<Tenant> {
    const patch = parse(QuotaPatchSchema, quota, 'quota');
    const set: Partial<TenantsTable> = {};
    if (patch.requestsPerSecond !== undefined) set.requests_per_second = patch.requestsPerSecond;
    if (patch.storageBytes !== undefined) set.storage_bytes = patch.storageBytes;
    if (Object.keys(set).length === 0) {
      const tenant = await this.getTenant(id);
      if (!tenant) throw tenantNotFound(id);
      return tenant;
    }
    const row = await this.db
      .updateTable('tenants')
      .set(set)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw tenantNotFound(id);
    return toTenant(row);
  }

  async deleteTenant(id: string, at: number = this.now()): Promise<void> {
    const [, , deleted] = await this.batch([
      this.db
        .updateTable('certificates')
        .set({ revoked_at: at })
        .where('revoked_at', 'is', null)
        .where(
          'principal_id',
          'in',
          this.db.selectFrom('principals').select('id').where('tenant_id', '=', id),
        ),
      this.db.deleteFrom('usage_minutes').where('tenant_id', '=', id),
      // Databases, placement, principals and their TOTP state go by ON DELETE CASCADE.
      this.db.deleteFrom('tenants').where('id', '=', id),
    ]);
    if (deleted === 0) throw tenantNotFound(id);
  }

  // ── databases ────────────────────────────────────────────────────────────

  async createDatabase(tenant: string, name: string): Promise<DatabaseRecord> {
    const valid = databaseName(name);
    const row = { tenant_id: tenant, name_key: valid.toLowerCase(), name: valid, created_at: this.now() };
    try {
      await this.db.insertInto('databases').values(row).execute();
    } catch (error) {
      const broken = brokenConstraint(error);
      if (broken === 'foreign-key') throw tenantNotFound(tenant);
      if (broken === 'unique') {
        throw new RookeryError(
          'DatabaseAlreadyExists',
          `Tenant "${tenant}" already has a database named "${valid}" (names ignore case).`,
        );
      }
      throw error;
    }
    return { tenantId: tenant, name: valid, createdAt: row.created_at };
  }

  async listDatabases(tenant: string): Promise<DatabaseRecord[]> {
    const rows = await this.db
      .selectFrom('databases')
      .select(['tenant_id', 'name', 'created_at'])
      .where('tenant_id', '=', tenant)
      .orderBy('name_key')
      .execute();
    return rows.map((r) => ({ tenantId: r.tenant_id, name: r.name, createdAt: r.created_at }));
  }

  async deleteDatabase(tenant: string, name: string): Promise<void> {
    const deleted = await this.db
      .deleteFrom('databases')
      .where('tenant_id', '=', tenant)
      .where('name_key', '=', name.toLowerCase())
      .executeTakeFirst();
    if (Number(deleted.numDeletedRows) === 0) {
      throw new RookeryError('DatabaseNotFound', `Tenant "${tenant}" has no database named "${name}".`);
    }
  }

  // ── principals ───────────────────────────────────────────────────────────

  async createPrincipal(input: CreatePrincipalInput): Promise<Principal> {
    const role = parse(RoleSchema, input.role, 'role');
    const kind = parse(PrincipalKindSchema, input.kind, 'principal kind');
    const name = parse(PrincipalNameSchema, input.name, 'principal name');
    if (input.tenantId === null && role.kind !== 'operator') {
      throw new RookeryError(
        'InvalidRequest',
        'A principal without a tenant is an operator: give it the role "operator", or name its tenant.',
      );
    }
    if (input.tenantId !== null && role.kind === 'operator') {
      throw new RookeryError(
        'InvalidRequest',
        'Operators belong to no tenant: create the operator with tenantId null, or give this principal a tenant role.',
      );
    }
    const principal: Principal = {
      id: randomUUID(),
      tenantId: input.tenantId,
      kind,
      name,
      role,
      createdAt: this.now(),
    };
    try {
      await this.db
        .insertInto('principals')
        .values({
          id: principal.id,
          tenant_id: principal.tenantId,
          kind: principal.kind,
          name: principal.name,
          role: JSON.stringify(principal.role),
          created_at: principal.createdAt,
        })
        .execute();
    } catch (error) {
      if (brokenConstraint(error) === 'foreign-key') throw tenantNotFound(String(input.tenantId));
      throw error;
    }
    return principal;
  }

  async getPrincipal(id: string): Promise<Principal | null> {
    const row = await this.db.selectFrom('principals').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toPrincipal(row) : null;
  }

  async listPrincipals(tenant: string | null, page?: PageRequest): Promise<Principal[]> {
    let query = this.db
      .selectFrom('principals')
      .selectAll()
      .where((eb) => (tenant === null ? eb('tenant_id', 'is', null) : eb('tenant_id', '=', tenant)))
      .orderBy('created_at')
      .orderBy('id');
    if (page) query = query.limit(page.pageSize).offset(page.start);
    return (await query.execute()).map(toPrincipal);
  }

  async countPrincipals(tenant: string | null): Promise<number> {
    const row = await this.db
      .selectFrom('principals')
      .select((eb) => eb.fn.countAll().as('count'))
      .where((eb) => (tenant === null ? eb('tenant_id', 'is', null) : eb('tenant_id', '=', tenant)))
      .executeTakeFirstOrThrow();
    // PostgreSQL's count is a bigint, which its driver answers as a string.
    return Number(row.count);
  }

  async deletePrincipal(id: string, at: number = this.now()): Promise<void> {
    const [, deleted] = await this.batch([
      this.db
        .updateTable('certificates')
        .set({ revoked_at: at })
        .where('principal_id', '=', id)
        .where('revoked_at', 'is', null),
      this.db.deleteFrom('principals').where('id', '=', id),
    ]);
    if (deleted === 0) throw principalNotFound(id);
  }

  // ── certificates ─────────────────────────────────────────────────────────

  async addCertificate(record: CertificateRecord): Promise<CertificateRecord> {
    const r = parse(CertificateRecordSchema, record, 'certificate record');
    let inserted: bigint | number;
    try {
      // INSERT … SELECT FROM principals: the certificate goes in only if its
      // principal exists at that instant (no foreign key: see schema.ts).
      const result = await this.db
        .insertInto('certificates')
        .columns(['serial', 'thumbprint', 'principal_id', 'not_before', 'not_after', 'revoked_at', 'pem'])
        .expression(
          this.db
            .selectFrom('principals')
            .select([
              text(r.serial).as('serial'),
              text(r.thumbprint).as('thumbprint'),
              'principals.id',
              bigint(r.notBefore).as('not_before'),
              bigint(r.notAfter).as('not_after'),
              nullableBigint(r.revokedAt).as('revoked_at'),
              text(r.pem).as('pem'),
            ])
            .where('principals.id', '=', r.principalId),
        )
        .executeTakeFirst();
      inserted = result.numInsertedOrUpdatedRows ?? 0;
    } catch (error) {
      if (brokenConstraint(error) === 'unique') {
        throw new RookeryError(
          'CertificateAlreadyExists',
          `A certificate with serial ${r.serial} or thumbprint ${r.thumbprint} is already registered.`,
        );
      }
      throw error;
    }
    if (Number(inserted) === 0) throw principalNotFound(r.principalId);
    return r;
  }

  async getCertificateByThumbprint(thumbprint: string): Promise<CertificateRecord | null> {
    const row = await this.db
      .selectFrom('certificates')
      .selectAll()
      .where('thumbprint', '=', thumbprint.toLowerCase())
      .executeTakeFirst();
    return row ? toCertificate(row) : null;
  }

  async getCertificateBySerial(serial: string): Promise<CertificateRecord | null> {
    const row = await this.db
      .selectFrom('certificates')
      .selectAll()
      .where('serial', '=', serial.toLowerCase())
      .executeTakeFirst();
    return row ? toCertificate(row) : null;
  }

  async listCertificates(principalId: string): Promise<CertificateRecord[]> {
    const rows = await this.db
      .selectFrom('certificates')
      .selectAll()
      .where('principal_id', '=', principalId)
      .orderBy('not_before')
      .orderBy('serial')
      .execute();
    return rows.map(toCertificate);
  }

  async revokeCertificate(serial: string, at: number): Promise<boolean> {
    const when = parse(Time, at, 'revocation time');
    const key = serial.toLowerCase();
    const updated = await this.db
      .updateTable('certificates')
      .set({ revoked_at: when })
      .where('serial', '=', key)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) > 0) return true;
    if (await this.getCertificateBySerial(key)) return false;
    throw new RookeryError('CertificateNotFound', `There is no certificate with serial ${key}.`);
  }

  async listRevokedSince(since: number): Promise<RevokedCertificate[]> {
    const rows = await this.db
      .selectFrom('certificates')
      .select(['serial', 'thumbprint', 'revoked_at'])
      .where('revoked_at', '>=', since)
      .orderBy('revoked_at')
      .orderBy('serial')
      .execute();
    return rows.map((r) => ({ serial: r.serial, thumbprint: r.thumbprint, revokedAt: r.revoked_at ?? 0 }));
  }

  // ── second factor (two-factor.ts) ────────────────────────────────────────

  readonly setTotpSecret: TwoFactorRecords['setTotpSecret'];
  readonly getTotpSecret: TwoFactorRecords['getTotpSecret'];
  readonly clearTotpSecret: TwoFactorRecords['clearTotpSecret'];
  readonly hasTotpDelivery: TwoFactorRecords['hasTotpDelivery'];
  readonly takeTotpDelivery: TwoFactorRecords['takeTotpDelivery'];
  readonly claimTotpStep: TwoFactorRecords['claimTotpStep'];
  readonly takeTwoFactorAttempt: TwoFactorRecords['takeTwoFactorAttempt'];
  readonly clearTwoFactorAttempts: TwoFactorRecords['clearTwoFactorAttempts'];
  readonly createTwoFactorSession: TwoFactorRecords['createTwoFactorSession'];
  readonly findTwoFactorSession: TwoFactorRecords['findTwoFactorSession'];
  readonly findCertificateSession: TwoFactorRecords['findCertificateSession'];
  readonly deleteTwoFactorSession: TwoFactorRecords['deleteTwoFactorSession'];
  readonly deleteTwoFactorSessions: TwoFactorRecords['deleteTwoFactorSessions'];

  // ── hosts' leases and tenants' placements (fleet.ts) ─────────────────────

  readonly acquireLease: FleetRecords['acquireLease'];
  readonly renewLease: FleetRecords['renewLease'];
  readonly getHost: FleetRecords['getHost'];
  readonly listHosts: FleetRecords['listHosts'];
  readonly drainHost: FleetRecords['drainHost'];
  readonly activateHost: FleetRecords['activateHost'];
  readonly retireHost: FleetRecords['retireHost'];
  readonly placeTenant: FleetRecords['placeTenant'];
  readonly getPlacement: FleetRecords['getPlacement'];
  readonly listPlacements: FleetRecords['listPlacements'];
  readonly movePlacement: FleetRecords['movePlacement'];
  readonly relocatePlacement: FleetRecords['relocatePlacement'];
  readonly reclaimPlacements: FleetRecords['reclaimPlacements'];
  readonly tenantsToReplace: FleetRecords['tenantsToReplace'];

  // ── usage (usage.ts) and gateways (gateways.ts) ─────────────────────────

  readonly addUsage: UsageRecords['addUsage'];
  readonly usage: UsageRecords['usage'];
  readonly heartbeatGateway: GatewayRecords['heartbeatGateway'];
  readonly leaveGateway: GatewayRecords['leaveGateway'];

  close(): Promise<void> {
    this.closed ??= (async () => {
      await this.db.destroy();
      await this.options.onClose?.();
    })();
    return this.closed;
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
