// The hand-off of relay connections (relay-handoff.ts) on a real fleet host process over real TLS: a
// connection whose ClientHello names a tenant the host owns and runs is served by the tenant's process
// with the tenant's own certificate; any other stays with the host (421 before a tenant is touched, a
// sleeping tenant not woken by a handshake); the tenant's process refuses what the relay port refuses.
import { X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import { type ControlStore, controlPaths, openSqliteControlStore } from '@rookery/control-store';
import {
  CertificateAuthority,
  createCertificateAuthority,
  issueClientCertificate,
  issueServiceCertificate,
  loadOrCreateCertificateAuthority,
  serviceOf,
} from '@rookery/pki';
import {
  HostTenantListSchema,
  INTERNAL_TOKEN_HEADER,
  RELAY_UPGRADE_PROTOCOL,
  relayAlpn,
  relayPath,
  relayServerName,
} from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_TOKEN, type FleetHost, startFleetHost } from './test-fixtures/fleet-host.js';

interface Pem {
  certPem: string;
  keyPem: string;
}

describe('the hand-off of relay connections to tenant processes', () => {
  const tmp = makeTempDir('rookery-handoff-');
  let store: ControlStore;
  let host: FleetHost;
  let ca: CertificateAuthority;
  let gatewayCert: Pem;
  let relayUrl: URL;

  /** A gateway's TLS connection naming `tenantId` (and `epoch`) in its ClientHello; who answered it. */
  function connect(
    tenantId: string,
    cert: Pem | null,
    epoch = 1,
  ): Promise<{ socket: tls.TLSSocket; shown: 'tenant' | 'host' | 'other' }> {
    return new Promise((resolve, reject) => {
      const socket = tls.connect({
        host: relayUrl.hostname,
        port: Number(relayUrl.port),
        servername: relayServerName(tenantId),
        ALPNProtocols: [relayAlpn(epoch), 'http/1.1'],
        ca: ca.certPem,
        ...(cert && { cert: cert.certPem, key: cert.keyPem }),
        // Who answered is what these tests look at: the name is checked below, not here.
        checkServerIdentity: () => undefined,
      });
      socket.once('error', reject);
      socket.once('secureConnect', () => {
        const raw = socket.getPeerCertificate(false).raw;
        const names = new X509Certificate(raw).subjectAltName ?? '';
        const shown =
          serviceOf(raw) === 'host'
            ? 'host'
            : names === `DNS:${relayServerName(tenantId)}`
              ? 'tenant'
              : 'other';
        resolve({ socket, shown });
      });
    });
  }

  /** Writes `head` and reads one whole answer (or how the connection ended without one). */
  function exchange(socket: tls.TLSSocket, head: string): Promise<string> {
    return new Promise((resolve) => {
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        const end = text.indexOf('\r\n\r\n');
        const length = /content-length: (\d+)/i.exec(text)?.[1];
        const whole = length !== undefined && text.length >= end + 4 + Number(length);
        if (end >= 0 && (whole || text.startsWith('HTTP/1.1 101'))) resolve(text);
      });
      socket.once('error', (error) => resolve(`error: ${error.message}`));
      socket.once('close', () => resolve(text === '' ? 'closed' : text));
      socket.write(head);
    });
  }

  const health = 'GET /health HTTP/1.1\r\nhost: tenant\r\n\r\n';
  const upgradeHead = (tenantId: string) =>
    `GET ${relayPath(tenantId)} HTTP/1.1\r\nhost: h1\r\nconnection: Upgrade\r\nupgrade: ${RELAY_UPGRADE_PROTOCOL}\r\n${INTERNAL_TOKEN_HEADER}: ${FLEET_TOKEN}\r\ncontent-length: 0\r\n\r\n`;
  const stateOf = async (tenantId: string) =>
    HostTenantListSchema.parse((await host.call('GET', '/tenants')).body).tenants.find(
      (t) => t.tenantId === tenantId,
    )?.state ?? 'stopped';

  beforeAll(async () => {
    store = await openSqliteControlStore(controlPaths(tmp.dir).controlDatabase);
    for (const id of ['acme', 'bolt', 'calm']) await store.createTenant({ id, name: id });
    host = await startFleetHost({
      ROOKERY_DATA: tmp.dir,
      ROOKERY_HOST_ID: 'h1',
      ROOKERY_LEASE_TTL_MS: '60000',
    });
    ca = await loadOrCreateCertificateAuthority(host.caDir);
    gatewayCert = await issueServiceCertificate(ca, { service: 'gateway', validDays: 1 });
    relayUrl = new URL(host.relayAddress);
    await store.placeTenant('acme');
    await store.placeTenant('calm');
    await store.acquireLease('h2', 'https://10.0.0.2:8082', 10, 3_600_000);
    expect(await store.placeTenant('bolt')).toMatchObject({ hostId: 'h2' });
    expect((await host.call('POST', '/tenants/acme/wake')).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    // A gateway's connection still open in the tenant: the host stops all the same (its relay port's
    // close must not wait for connections it handed away).
    await connect('acme', gatewayCert).catch(() => null);
    await host?.stop();
    await store?.close();
    tmp.cleanup();
  });

  it("is served by the tenant's process, shown the tenant's own certificate, keep-alive", async () => {
    const { socket, shown } = await connect('acme', gatewayCert);
    expect(shown).toBe('tenant');
    for (let i = 0; i < 2; i++) {
      const text = await exchange(socket, health);
      expect(text).toMatch(/^HTTP\/1\.1 200/);
      expect(text).toContain('"status":"ok"');
      socket.removeAllListeners('data');
      socket.removeAllListeners('close');
      socket.removeAllListeners('error');
    }
    socket.destroy();
  });

  it('closes the connections handed to a tenant when the tenant stops (as a drain or a move stops it)', async () => {
    const { socket, shown } = await connect('calm', gatewayCert);
    // calm is asleep: the host keeps this one; woken through it, the next connection is handed off.
    expect(shown).toBe('host');
    expect(await exchange(socket, upgradeHead('calm'))).toMatch(/^HTTP\/1\.1 101/);
    const handed = await connect('calm', gatewayCert);
    expect(handed.shown).toBe('tenant');
    expect(await exchange(handed.socket, health)).toMatch(/^HTTP\/1\.1 200/);
    const closed = new Promise((resolve) => handed.socket.once('close', resolve));
    expect((await host.call('POST', '/tenants/calm/stop')).status).toBe(200);
    await closed;
    socket.destroy();
    expect(await stateOf('calm')).toBe('stopped');
  });

  it('stays with the host for a tenant placed elsewhere: 421 before the tenant is started here', async () => {
    const { socket, shown } = await connect('bolt', gatewayCert);
    expect(shown).toBe('host');
    expect(await exchange(socket, upgradeHead('bolt'))).toMatch(/^HTTP\/1\.1 421/);
    expect(await stateOf('bolt')).toBe('stopped');
  });

  it('stays with the host for a tenant it owns but does not run: a handshake wakes nothing', async () => {
    const { socket, shown } = await connect('calm', gatewayCert);
    expect(shown).toBe('host');
    expect(await stateOf('calm')).toBe('stopped');
    // The relay upgrade (after the token and certificate checks) wakes it and pipes, as before the hand-off.
    expect(await exchange(socket, upgradeHead('calm'))).toMatch(/^HTTP\/1\.1 101/);
  });

  it('stays with the host when the gateway believes in a newer epoch than the host confirmed', async () => {
    const { socket, shown } = await connect('acme', gatewayCert, 99);
    expect(shown).toBe('host');
    socket.destroy();
  });

  it("is refused by the tenant's process for a principal's certificate of the same CA, before any HTTP", async () => {
    const operator = await issueClientCertificate(ca, {
      principalId: 'op',
      tenantId: 'acme',
      kind: 'program',
      name: 'acme program',
      validDays: 1,
    });
    const { socket, shown } = await connect('acme', operator);
    expect(shown).toBe('tenant');
    expect(await exchange(socket, health)).not.toMatch(/^HTTP/);
  });

  it('fails the handshake for a gateway certificate of another CA, and for a peer without one', async () => {
    const foreign = await CertificateAuthority.fromPem(
      await createCertificateAuthority({ commonName: 'elsewhere' }),
    );
    const impostor = await issueServiceCertificate(foreign, { service: 'gateway', validDays: 1 });
    const outcome = (cert: Pem | null) =>
      connect('acme', cert).then(
        ({ socket }) => exchange(socket, health),
        (error: Error) => `error: ${error.message}`,
      );
    expect(await outcome(impostor)).not.toMatch(/^HTTP/);
    expect(await outcome(null)).not.toMatch(/^HTTP/);
  });
});
