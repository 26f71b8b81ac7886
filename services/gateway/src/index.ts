export { authorize, type Decision } from './authorize.js';
export { type Gateway, type GatewayOptions, type ServerCertificate, startGateway } from './gateway.js';
export { HostClient } from './host-client.js';
export { classifyTenantRoute, type TenantRoute } from './route-access.js';
