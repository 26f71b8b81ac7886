// The one interface to the control plane's state. The gateway, the host, the
// control API and the CLI all talk to this, never to SQL: SQLite (embedded)
// and PostgreSQL (at scale) sit behind it with the same behaviour, proven by
// one contract test suite run against both.
import type { FleetStore } from './fleet-store.js';
import type { GatewayFleetStore } from './gateways.js';
import type {
  CertificateRecord,
  DatabaseRecord,
  PageRequest,
  Principal,
  PrincipalKind,
  Quota,
  RevokedCertificate,
  Role,
  Tenant,
  TwoFactorAttempt,
  TwoFactorAttemptLimit,
  TwoFactorSession,
  UsageRow,
} from './types.js';

export interface CreateTenantInput {
  id: string;
  name: string;
  /** Defaults to DEFAULT_QUOTA; a partial quota fills the rest from it. */
  quota?: Partial<Quota>;
}

export interface CreatePrincipalInput {
  /** null for an operator (role `operator`); a tenant id otherwise. */
  tenantId: string | null;
  kind: PrincipalKind;
  name: string;
  role: Role;
}

/**
 * Failures are RookeryError values with stable codes (InvalidRequest,
 * InvalidTenantId, InvalidDatabaseName, TenantNotFound, TenantAlreadyExists,
 * DatabaseNotFound, DatabaseAlreadyExists, PrincipalNotFound,
 * CertificateNotFound, CertificateAlreadyExists; the fleet's are in
 * fleet-store.ts). Lookups by key answer null when nothing matches; changes to
 * something missing fail with *NotFound.
 */
export interface ControlStore extends FleetStore, GatewayFleetStore {
  readonly dialect: 'sqlite' | 'postgres';

  createTenant(input: CreateTenantInput): Promise<Tenant>;
  getTenant(id: string): Promise<Tenant | null>;
  /** Ordered by id. */
  listTenants(): Promise<Tenant[]>;
  /** Changes only the fields given; answers the tenant as it now is. */
  updateQuota(id: string, quota: Partial<Quota>): Promise<Tenant>;
  /**
   * Removes the tenant with its databases, placement, principals, TOTP state
   * and usage. Its principals' certificates are kept, marked revoked at `at`,
   * so a certificate presented later reads as revoked (and reaches the
   * gateway's revocation poll), not as unknown.
   */
  deleteTenant(id: string, at?: number): Promise<void>;

  createDatabase(tenantId: string, name: string): Promise<DatabaseRecord>;
  /** Ordered by name. */
  listDatabases(tenantId: string): Promise<DatabaseRecord[]>;
  /** Names compare case-insensitively, as in the engine. */
  deleteDatabase(tenantId: string, name: string): Promise<void>;

  createPrincipal(input: CreatePrincipalInput): Promise<Principal>;
  getPrincipal(id: string): Promise<Principal | null>;
  /**
   * The principals of one tenant, or the operators for null; ordered by creation. With `page`, only
   * `pageSize` of them from the `start`th (the control API's list pages them, a tenant may have thousands).
   */
  listPrincipals(tenantId: string | null, page?: PageRequest): Promise<Principal[]>;
  /** How many principals `listPrincipals(tenantId)` would answer. */
  countPrincipals(tenantId: string | null): Promise<number>;
  /** Removes the principal and its TOTP state; its certificates are kept, revoked at `at`. */
  deletePrincipal(id: string, at?: number): Promise<void>;

  addCertificate(record: CertificateRecord): Promise<CertificateRecord>;
  getCertificateByThumbprint(thumbprint: string): Promise<CertificateRecord | null>;
  getCertificateBySerial(serial: string): Promise<CertificateRecord | null>;
  /** Ordered by notBefore, then serial. */
  listCertificates(principalId: string): Promise<CertificateRecord[]>;
  /** Idempotent: true if this call revoked it, false if it already was (the first time is kept). */
  revokeCertificate(serial: string, at: number): Promise<boolean>;
  /** Revocations with revokedAt >= since (inclusive, so pollers may overlap), oldest first. */
  listRevokedSince(since: number): Promise<RevokedCertificate[]>;

  /**
   * `sealed` is the secret already encrypted by the caller (see @rookery/pki sealSecret). With
   * `deliver`, the secret also waits for its person to collect it once (takeTotpDelivery); without,
   * any delivery still pending is dropped (the secret was shown to whoever set it).
   */
  setTotpSecret(principalId: string, sealed: string, options?: { deliver?: boolean }): Promise<void>;
  getTotpSecret(principalId: string): Promise<string | null>;
  clearTotpSecret(principalId: string): Promise<void>;
  /** Whether the principal's secret waits to be collected by its person. */
  hasTotpDelivery(principalId: string): Promise<boolean>;
  /**
   * The sealed secret waiting for its person, and no longer waiting: answered exactly once across
   * processes (one atomic statement), null when none waits.
   */
  takeTotpDelivery(principalId: string): Promise<string | null>;
  /**
   * Records that the TOTP code of time step `step` was used: true exactly once
   * per (principal, step), false on every replay, atomically across processes.
   * Steps more than TOTP_STEPS_KEPT behind the newest claimed step are pruned
   * and also answer false.
   */
  claimTotpStep(principalId: string, step: number): Promise<boolean>;
  /**
   * Takes one of the principal's TOTP attempts at `now`, before its code is
   * checked, atomically across processes: allowed while fewer than
   * `maxAttempts` were taken in the current window (a window opens with the
   * first attempt after the previous one ended and lasts `windowMs`), refused
   * with the end of the window otherwise. However many attempts race, from any
   * number of gateways, exactly `maxAttempts` per window are allowed.
   */
  takeTwoFactorAttempt(
    principalId: string,
    limit: TwoFactorAttemptLimit,
    now: number,
  ): Promise<TwoFactorAttempt>;
  /** Forgets the principal's attempts: a code opened a session. */
  clearTwoFactorAttempts(principalId: string): Promise<void>;

  createTwoFactorSession(session: TwoFactorSession): Promise<void>;
  /** The session with this token hash, expired or not (the caller checks expiresAt). */
  findTwoFactorSession(tokenHash: string): Promise<TwoFactorSession | null>;
  /** The longest-lived certificate-bound session for this thumbprint still open at `now`. */
  findCertificateSession(thumbprint: string, now: number): Promise<TwoFactorSession | null>;
  /** Ends the one session with this token hash (a browser's sign-out); none is fine. */
  deleteTwoFactorSession(tokenHash: string): Promise<void>;
  /** Ends every session of a principal (e.g. after its authenticator was reset). */
  deleteTwoFactorSessions(principalId: string): Promise<void>;

  /**
   * Adds the counts to the (tenant, minute) rows, creating them as needed, in one transaction. With a
   * `flushId` (letters, digits, `.`, `_`, `:`, `-`; unique per flush, e.g. the gateway's id and a counter)
   * the flush is added once: a retry of one already added (its answer lost after the commit) adds nothing
   * and answers false. Ids are remembered for a day (USAGE_FLUSH_IDS_KEPT_MS).
   */
  addUsage(rows: readonly UsageRow[], flushId?: string): Promise<boolean>;
  /** Rows with fromMinute <= minute <= toMinute, ascending. */
  usage(tenantId: string, fromMinute: number, toMinute: number): Promise<UsageRow[]>;

  close(): Promise<void>;
}
