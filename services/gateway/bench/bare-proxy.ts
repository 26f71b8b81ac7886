// The ceilings of the gateway benchmark, each in a process of its own like the gateway:
//
// - `proxy`: HTTPS with the gateway's TLS settings (client certificate required) and every request
//   streamed to the tenant's socket by the gateway's own proxy code, with no authentication,
//   authorisation, quotas or metering: what TLS termination plus one more HTTP hop cost on this machine,
//   which no gateway can go below;
// - `tls`: the same HTTPS server answering a fixed document itself: TLS and HTTP alone.
//
// Forked by bench/gateway.ts, which sends { mode, socketPath, path, caPem, certPem, keyPem } and gets
// { url } back.
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { proxyToTenant } from '../src/proxy.js';
import { TenantPools } from '../src/tenant-pool.js';

interface Setup {
  mode: 'proxy' | 'tls';
  socketPath: string;
  caPem: string;
  certPem: string;
  keyPem: string;
  /** For `tls`: the document it answers with. */
  body: string;
}

const setup = await new Promise<Setup>((resolve) => process.once('message', (m) => resolve(m as Setup)));
const pools = new TenantPools();
const body = Buffer.from(setup.body);
const server = https.createServer(
  {
    key: setup.keyPem,
    cert: setup.certPem,
    ca: [setup.caPem],
    requestCert: true,
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2',
  },
  (request, response) => {
    if (setup.mode === 'tls') {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      response.end(body);
      return;
    }
    proxyToTenant(request, response, {
      path: request.url ?? '/',
      pool: pools.for(setup.socketPath),
      requestId: 'bench',
    }).catch(() => response.destroy());
  },
);
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.send?.({ url: `https://127.0.0.1:${(server.address() as AddressInfo).port}` });
});
process.on('disconnect', () => process.exit(0));
