// @rookery/control: the control plane. For now its store (tenants, databases,
// placements, principals, certificates, TOTP, usage) behind one interface with
// SQLite and PostgreSQL implementations.
export type { ControlStore, CreatePrincipalInput, CreateTenantInput } from './store/control-store.js';
export { TOTP_STEPS_KEPT } from './store/kysely-store.js';
export { openPostgresControlStore, type PostgresControlStoreOptions } from './store/postgres.js';
export { openSqliteControlStore, type SqliteControlStoreOptions } from './store/sqlite.js';
export * from './store/types.js';
