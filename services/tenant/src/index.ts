export { loadConfig, type TenantConfig, TenantConfigSchema } from './config.js';
export { buildTenantServer, type TenantServer } from './server.js';
