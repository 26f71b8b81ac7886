// The tables as Kysely sees them (migrations.ts creates them). Column types
// are the portable subset: text, bigint (INTEGER affinity in SQLite), JSON
// kept as text; both drivers hand bigints back as JS numbers.

export interface TenantsTable {
  id: string;
  name: string;
  created_at: number;
  requests_per_second: number;
  storage_bytes: number;
}

export interface DatabasesTable {
  tenant_id: string;
  /** Lower-cased name: database names compare case-insensitively. */
  name_key: string;
  name: string;
  created_at: number;
}

export interface PlacementsTable {
  tenant_id: string;
  host_id: string;
  /** The tenant's placement epoch (fleet-store.ts, Placement.epoch). */
  epoch: number;
  /** The host's lease epoch the placement belongs to. */
  host_epoch: number;
  updated_at: number;
}

/** Hosts and their leases; every time here is on the database's clock (fleet.ts). */
export interface HostsTable {
  host_id: string;
  address: string;
  capacity: number;
  epoch: number;
  expires_at: number;
  acquired_at: number;
  /** A HostState: active, draining or retired. */
  state: string;
}

export interface PrincipalsTable {
  id: string;
  tenant_id: string | null;
  kind: string;
  name: string;
  /** JSON of a Role, parsed with RoleSchema on the way out. */
  role: string;
  created_at: number;
}

export interface CertificatesTable {
  serial: string;
  thumbprint: string;
  /** No foreign key: a deleted principal's certificates stay, revoked. */
  principal_id: string;
  not_before: number;
  not_after: number;
  revoked_at: number | null;
  pem: string;
}

export interface TotpSecretsTable {
  principal_id: string;
  sealed: string;
  updated_at: number;
  /** Set while the secret waits for its person to collect it once (takeTotpDelivery); null otherwise. */
  delivery_pending_since: number | null;
}

export interface TotpStepsTable {
  principal_id: string;
  step: number;
  claimed_at: number;
}

export interface TwoFactorSessionsTable {
  token_hash: string;
  principal_id: string;
  thumbprint: string;
  binding: string;
  expires_at: number;
}

/** The current window of a person's TOTP attempts (one row per principal). */
export interface TwoFactorAttemptsTable {
  principal_id: string;
  window_started_at: number;
  attempts: number;
}

export interface UsageMinutesTable {
  tenant_id: string;
  minute: number;
  requests: number;
  bytes_in: number;
  bytes_out: number;
  work_units: number;
}

/** A gateway's heartbeat (gateways.ts); expires_at on the database's clock. */
export interface GatewaysTable {
  gateway_id: string;
  expires_at: number;
}

/** Requests a tenant sent one gateway in that gateway's last heartbeat interval. */
export interface GatewayDemandTable {
  gateway_id: string;
  tenant_id: string;
  requests: number;
}

/** A usage flush already added (its id), kept a day so that a retry of it adds nothing. */
export interface UsageFlushesTable {
  flush_id: string;
  added_at: number;
}

export interface ControlSchema {
  tenants: TenantsTable;
  databases: DatabasesTable;
  placements: PlacementsTable;
  hosts: HostsTable;
  principals: PrincipalsTable;
  certificates: CertificatesTable;
  totp_secrets: TotpSecretsTable;
  totp_steps: TotpStepsTable;
  two_factor_sessions: TwoFactorSessionsTable;
  two_factor_attempts: TwoFactorAttemptsTable;
  usage_minutes: UsageMinutesTable;
  gateways: GatewaysTable;
  gateway_demand: GatewayDemandTable;
  usage_flushes: UsageFlushesTable;
}
