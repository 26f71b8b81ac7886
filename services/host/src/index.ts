// @rookery/host: the tenant supervisor and its internal HTTP API.
export { type HostConfig, HostConfigSchema, loadHostConfig } from './config.js';
export { DEFAULT_INDEX_WORKER_THRESHOLD, IndexBuildQueue } from './index-builds.js';
export { buildHostServer, type HostServerOptions } from './server.js';
export {
  type PurgeResult,
  type SupervisorConfig,
  type SupervisorOptions,
  type TenantInfo,
  type TenantState,
  type TenantStats,
  TenantSupervisor,
  type WakeResult,
} from './supervisor.js';
export {
  commandFor,
  defaultTenantCommand,
  sourceTenantCommand,
  type TenantCommand,
} from './tenant-command.js';
