// Attacks on fleet routing (docs/scale-out.md, "Routing"), end to end through a real gateway in fleet
// routing and a real fleet host process with its relay on mutual TLS (test-fixtures/fleet-stack.ts): a
// client asking the gateway for a relay, a client's certificate taken straight to a host's relay port,
// and the gateway's own service certificate presented to the public gateway as a client's.
import https from 'node:https';
import path from 'node:path';
import tls from 'node:tls';
import { readCertificatePair } from '@rookery/pki';
import {
  HostTenantListSchema,
  INTERNAL_TOKEN_HEADER,
  PLACEMENT_EPOCH_HEADER,
  RELAY_UPGRADE_PROTOCOL,
  relayAlpn,
  relayPath,
  relayServerName,
} from '@rookery/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_TOKEN, type FleetStack, startFleetStack } from '../test-fixtures/fleet-stack.js';
import type { Client } from '../test-fixtures/gateway-clients.js';
import { sendRaw } from '../test-fixtures/raw-tls.js';

let fleet: FleetStack;
let admin: Client;

beforeAll(async () => {
  fleet = await startFleetStack({ hosts: 1 });
  admin = await fleet.tenantAdmin({ id: 'acme', name: 'Acme' }, 'acme-admin');
  await fleet.store.createTenant({ id: 'globex', name: 'Globex' });
  await fleet.running('acme');
  expect((await admin.call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
}, 180_000);
afterAll(async () => {
  await fleet?.close();
});

/** The upgrade a gateway would send, from someone else, with `cert`; the status the host answered (101: relayed). */
function relayStatus(
  cert: { certPem: string; keyPem: string },
  tenantId: string,
  token?: string,
): Promise<number> {
  const relay = new URL(fleet.hosts[0]!.relayAddress);
  return new Promise((resolve, reject) => {
    const request = https.request({
      host: relay.hostname,
      port: relay.port,
      path: relayPath(tenantId),
      ca: fleet.ca.certPem,
      cert: cert.certPem,
      key: cert.keyPem,
      agent: false,
      headers: {
        connection: 'Upgrade',
        upgrade: RELAY_UPGRADE_PROTOCOL,
        [PLACEMENT_EPOCH_HEADER]: '1',
        ...(token && { [INTERNAL_TOKEN_HEADER]: token }),
      },
    });
    request.on('error', reject);
    request.on('upgrade', (_answer, socket) => {
      socket.destroy();
      resolve(101);
    });
    request.on('response', (answer) => {
      answer.resume();
      resolve(answer.statusCode ?? 0);
    });
    request.end();
  });
}

const runningOnHost = async () =>
  HostTenantListSchema.parse((await fleet.hosts[0]!.call('GET', '/tenants')).body)
    .tenants.filter((t) => t.state === 'running')
    .map((t) => t.tenantId);

describe('fleet routing under attack', () => {
  it('a client asking the gateway for a relay upgrade gets 400, not a pipe to the tenant', async () => {
    const answer = await sendRaw(
      fleet,
      admin,
      `GET /databases/shop/docs?id=users/1 HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: ${RELAY_UPGRADE_PROTOCOL}\r\n${PLACEMENT_EPOCH_HEADER}: 99\r\n\r\n`,
    );
    expect(answer.statuses).toEqual([400]);
    expect(answer.text).toContain('WebSocket upgrades only');
  });

  it("a tenant admin's certificate taken straight to a host's relay port: refused, another tenant not started", async () => {
    // Without the token: 401. Even with the internal token (leaked), a principal's certificate is not a service's: 403.
    expect(await relayStatus(admin, 'globex')).toBe(401);
    expect(await relayStatus(admin, 'globex', FLEET_TOKEN)).toBe(403);
    expect(await runningOnHost()).not.toContain('globex');
  });

  it("a tenant admin's certificate taken to the relay port naming its own running tenant in the ClientHello (handed to the tenant's process): closed before any HTTP", async () => {
    const relay = new URL(fleet.hosts[0]!.relayAddress);
    let shown: string | undefined;
    const outcome = await new Promise<string>((resolve) => {
      const socket = tls.connect({
        host: relay.hostname,
        port: Number(relay.port),
        servername: relayServerName('acme'),
        ALPNProtocols: [relayAlpn(1), 'http/1.1'],
        ca: fleet.ca.certPem,
        cert: admin.certPem,
        key: admin.keyPem,
      });
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
      });
      socket.once('secureConnect', () => {
        shown = socket.getPeerCertificate(false).subjectaltname;
        socket.write('GET /databases/shop/docs?id=users/1 HTTP/1.1\r\nhost: tenant\r\n\r\n');
      });
      socket.once('error', (error) => resolve(`error: ${error.message}${text}`));
      socket.once('close', () => resolve(text === '' ? 'closed' : text));
    });
    // The tenant's own certificate: the connection was handed off, and the tenant's process checked the peer.
    expect(shown).toBe(`DNS:${relayServerName('acme')}`);
    expect(outcome).not.toMatch(/HTTP\/1\.1/);
    // The tenant's process is unharmed: its gateway's requests are answered.
    expect((await admin.call('GET', '/databases/shop/docs?id=users/1')).status).toBe(404);
  });

  it("the gateway's own relay certificate presented to the public gateway is no client's: 401", async () => {
    const gatewayCert = readCertificatePair({
      directory: path.join(fleet.dir, 'gateway'),
      certFile: 'relay-client.crt',
      keyFile: 'relay-client.key',
    });
    if (!gatewayCert) throw new Error("the fleet's gateway has no relay certificate");
    const reply = await fleet.clients.connect(gatewayCert).call('GET', '/databases/shop/docs?id=users/1');
    expect(reply.status).toBe(401);
  });
});
