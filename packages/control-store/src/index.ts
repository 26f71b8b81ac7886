// @rookery/control-store: the control plane's data and the operations on it.
// Its store (tenants, databases, principals, certificates, TOTP, usage, and
// the fleet: hosts' leases and tenants' placements) behind one interface with
// SQLite and PostgreSQL implementations, the embedded file layout, how a
// process opens the store from its settings, and the admin operations the CLI
// and the control API are both built from. A package, not a service: the
// gateway, the worker, the CLI and the control API all read the same store,
// and no service may import another service's code.
export {
  bundlePkcs12,
  CertificateKeyTypeSchema,
  CertificateSerialSchema,
  DEFAULT_CERTIFICATE_DAYS,
  type IssueCertificateInput,
  type IssuedPrincipalCertificate,
  issuePrincipalCertificate,
  requireCertificate,
  revokePrincipalCertificate,
} from './admin/certificates.js';
export { requirePrincipal, requireTenant } from './admin/require.js';
export { deleteTenant, type ProvisionTenantInput, provisionTenant } from './admin/tenants.js';
export {
  collectTotpEnrolment,
  enrolTotp,
  openTotpSecret,
  pendingTotpEnrolment,
  resetTotp,
  sealTotpSecret,
  startTotpEnrolment,
  TOTP_ISSUER,
  type TotpEnrolment,
} from './admin/totp.js';
export { parseInput } from './input.js';
export { type OpenControlStoreOptions, openControlStore } from './open.js';
export { type ControlPaths, controlPaths } from './paths.js';
export type { ControlStore, CreatePrincipalInput, CreateTenantInput } from './store/control-store.js';
export { FLEET_LIMITS, type FleetClock } from './store/fleet.js';
export type {
  FleetStore,
  HostRecord,
  HostState,
  Lease,
  Placement,
  Replacement,
  ReplacementDecision,
  ReplacementReason,
} from './store/fleet-store.js';
export {
  type GatewayDemand,
  type GatewayFleetStore,
  type GatewayFleetView,
  MAX_DEMAND_ROWS,
} from './store/gateways.js';
export { openPostgresControlStore, type PostgresControlStoreOptions } from './store/postgres.js';
export { openSqliteControlStore, type SqliteControlStoreOptions } from './store/sqlite.js';
export { TOTP_STEPS_KEPT } from './store/two-factor.js';
export * from './store/types.js';
export { isControlStoreUnreachable } from './store/unreachable.js';
export { USAGE_FLUSH_IDS_KEPT_MS } from './store/usage.js';
