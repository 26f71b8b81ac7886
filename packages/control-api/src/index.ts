// @rookery/control: the control plane. Its store (tenants, databases,
// placements, principals, certificates, TOTP, usage) behind one interface with
// SQLite and PostgreSQL implementations, the embedded file layout, the admin
// operations the CLI is built from, and the control API offering them over
// HTTP (hosted by the gateway, which hands it authenticated callers).
export {
  bundlePkcs12,
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
  enrolTotp,
  openTotpSecret,
  resetTotp,
  sealTotpSecret,
  TOTP_ISSUER,
  type TotpEnrolment,
} from './admin/totp.js';
export { buildControlApi, type ControlAnswer, type ControlApi, type ControlApiOptions } from './api/app.js';
export type { ControlCaller } from './api/caller.js';
export { parseInput } from './input.js';
export { type OpenControlStoreOptions, openControlStore } from './open.js';
export { type ControlPaths, controlPaths } from './paths.js';
export type { ControlStore, CreatePrincipalInput, CreateTenantInput } from './store/control-store.js';
export { openPostgresControlStore, type PostgresControlStoreOptions } from './store/postgres.js';
export { openSqliteControlStore, type SqliteControlStoreOptions } from './store/sqlite.js';
export { TOTP_STEPS_KEPT } from './store/two-factor.js';
export * from './store/types.js';
