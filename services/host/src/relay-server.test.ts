// The relay port of a real fleet host process (main.ts with ROOKERY_HOST_ID) on a real control store, over
// real mutual TLS: who may connect (the gateway's service certificate of Rookery's CA only), the relay
// upgrade becoming a byte pipe to the tenant, and every refusal written before the tenant is touched.
import https from 'node:https';
import type { Socket } from 'node:net';
import tls from 'node:tls';
import { type ControlStore, controlPaths, openSqliteControlStore } from '@rookery/control-store';
import {
  CertificateAuthority,
  createCertificateAuthority,
  issueClientCertificate,
  issueServiceCertificate,
  loadOrCreateCertificateAuthority,
} from '@rookery/pki';
import {
  HostTenantListSchema,
  HostTenantNotHereAnswerSchema,
  HostTenantStatsSchema,
  INTERNAL_TOKEN_HEADER,
  PLACEMENT_EPOCH_HEADER,
  ProblemSchema,
  RELAY_UPGRADE_PROTOCOL,
  relayPath,
} from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_TOKEN, type FleetHost, startFleetHost } from './test-fixtures/fleet-host.js';

interface Pem {
  certPem: string;
  keyPem: string;
}

type RelayAnswer =
  | { upgraded: true; socket: Socket; epoch: string | undefined }
  | { upgraded: false; status: number; body: unknown };

describe('the relay port of a fleet host', () => {
  const tmp = makeTempDir('rookery-relay-');
  let store: ControlStore;
  let host: FleetHost;
  let ca: CertificateAuthority;
  let gatewayCert: Pem;
  let relayUrl: URL;

  /** Asks the relay for `tenantId` with `cert`; the upgraded socket is left open for the test. */
  function relay(
    tenantId: string,
    cert: Pem,
    headers: Record<string, string> = { [INTERNAL_TOKEN_HEADER]: FLEET_TOKEN },
  ): Promise<RelayAnswer> {
    return new Promise((resolve, reject) => {
      const request = https.request({
        host: relayUrl.hostname,
        port: relayUrl.port,
        path: relayPath(tenantId),
        ca: ca.certPem,
        cert: cert.certPem,
        key: cert.keyPem,
        agent: false,
        headers: { connection: 'Upgrade', upgrade: RELAY_UPGRADE_PROTOCOL, ...headers },
      });
      request.on('error', reject);
      request.on('upgrade', (answer, socket: Socket) =>
        resolve({ upgraded: true, socket, epoch: answer.headers[PLACEMENT_EPOCH_HEADER] as string }),
      );
      request.on('response', async (answer) => {
        let text = '';
        for await (const chunk of answer) text += chunk;
        resolve({ upgraded: false, status: answer.statusCode ?? 0, body: JSON.parse(text) });
      });
      request.end();
    });
  }

  /** One HTTP/1.1 exchange written by hand on an upgraded relay socket: the tenant's raw answer. */
  function exchange(socket: Socket, head: string): Promise<string> {
    return new Promise((resolve, reject) => {
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        const end = text.indexOf('\r\n\r\n');
        const length = /content-length: (\d+)/i.exec(text)?.[1];
        if (end >= 0 && length !== undefined && text.length >= end + 4 + Number(length)) resolve(text);
      });
      socket.once('error', reject);
      socket.write(head);
    });
  }

  const listed = async () =>
    HostTenantListSchema.parse((await host.call('GET', '/tenants')).body).tenants.map((t) => t.tenantId);

  beforeAll(async () => {
    store = await openSqliteControlStore(controlPaths(tmp.dir).controlDatabase);
    for (const id of ['acme', 'bolt']) await store.createTenant({ id, name: id });
    host = await startFleetHost({
      ROOKERY_DATA: tmp.dir,
      ROOKERY_HOST_ID: 'h1',
      ROOKERY_LEASE_TTL_MS: '60000',
    });
    ca = await loadOrCreateCertificateAuthority(host.caDir);
    gatewayCert = await issueServiceCertificate(ca, { service: 'gateway', validDays: 1 });
    relayUrl = new URL(host.relayAddress);
    await store.placeTenant('acme');
    await store.acquireLease('h2', 'https://10.0.0.2:8082', 10, 3_600_000);
    // h2 is less loaded now: bolt goes there.
    expect(await store.placeTenant('bolt')).toMatchObject({ hostId: 'h2', epoch: 1 });
  }, 120_000);

  afterAll(async () => {
    await host?.stop();
    await store?.close();
    tmp.cleanup();
  });

  it('registers the relay, https on its own port, as the address gateways reach the host at', async () => {
    expect(relayUrl.protocol).toBe('https:');
    expect(await store.getHost('h1')).toMatchObject({ address: host.relayAddress, live: true });
  });

  it("relays the gateway's exchanges to the tenant it owns, answering 101 with the placement epoch", async () => {
    const answer = await relay('acme', gatewayCert, {
      [INTERNAL_TOKEN_HEADER]: FLEET_TOKEN,
      [PLACEMENT_EPOCH_HEADER]: '1',
    });
    if (!answer.upgraded) throw new Error(`expected 101, got ${JSON.stringify(answer)}`);
    expect(answer.epoch).toBe('1');
    // Two exchanges on the one connection: it is a keep-alive connection to the tenant.
    for (let i = 0; i < 2; i++) {
      const text = await exchange(answer.socket, 'GET /health HTTP/1.1\r\nhost: tenant\r\n\r\n');
      expect(text).toMatch(/^HTTP\/1\.1 200/);
      expect(text).toContain('"status":"ok"');
    }
    // The tenant's end of the pipe goes with the gateway's.
    const closed = new Promise((resolve) => answer.socket.once('close', resolve));
    answer.socket.destroy();
    await closed;
  });

  it('answers 421 TenantNotHere with the owner and epoch, before the tenant is started here', async () => {
    const answer = await relay('bolt', gatewayCert);
    expect(answer).toMatchObject({ upgraded: false, status: 421 });
    if (answer.upgraded) return;
    expect(HostTenantNotHereAnswerSchema.parse(answer.body)).toMatchObject({
      tenantId: 'bolt',
      owner: { hostId: 'h2', address: 'https://10.0.0.2:8082' },
      epoch: 1,
    });
    expect(await listed()).not.toContain('bolt');
  });

  it('refuses without the internal token (401), and a malformed relay request (400), before starting anything', async () => {
    expect(await relay('bolt', gatewayCert, {})).toMatchObject({
      upgraded: false,
      status: 401,
      body: { code: 'InternalTokenRequired' },
    });
    expect(
      await relay('bolt', gatewayCert, {
        [INTERNAL_TOKEN_HEADER]: FLEET_TOKEN,
        [PLACEMENT_EPOCH_HEADER]: '1e3',
      }),
    ).toMatchObject({ upgraded: false, status: 400, body: { code: 'InvalidRequest' } });
    expect(await relay('Not_A_Tenant', gatewayCert)).toMatchObject({ upgraded: false, status: 400 });
    expect(await listed()).not.toContain('bolt');
  });

  it("refuses a principal's certificate of the same CA (403), on the relay and on the routes", async () => {
    const operator = await issueClientCertificate(ca, {
      principalId: 'op',
      tenantId: null,
      kind: 'program',
      name: 'operator',
      validDays: 1,
    });
    const answer = await relay('acme', operator);
    expect(answer).toMatchObject({ upgraded: false, status: 403 });
    if (!answer.upgraded) expect(ProblemSchema.parse(answer.body).code).toBe('Forbidden');
  });

  it("refuses, during the TLS handshake, a certificate that is not from Rookery's CA, and a peer without one", async () => {
    const foreign = await CertificateAuthority.fromPem(
      await createCertificateAuthority({ commonName: 'elsewhere' }),
    );
    const impostor = await issueServiceCertificate(foreign, { service: 'gateway', validDays: 1 });
    await expect(relay('acme', impostor)).rejects.toThrow();
    const bare = tls.connect({ host: relayUrl.hostname, port: Number(relayUrl.port), ca: ca.certPem });
    const outcome = await new Promise<string>((resolve) => {
      bare.once('error', (error) => resolve(`error: ${error.message}`));
      bare.once('close', () => resolve('closed'));
      bare.once('secureConnect', () => bare.write('GET /tenants HTTP/1.1\r\nhost: h1\r\n\r\n'));
      bare.once('data', (chunk: Buffer) => resolve(`answered: ${chunk.toString('latin1').slice(0, 20)}`));
    });
    expect(outcome).not.toMatch(/^answered/);
    bare.destroy();
  });

  it('serves the internal routes to the gateway over the same port (stats without waking)', async () => {
    const stats = await new Promise<unknown>((resolve, reject) => {
      https
        .get(
          {
            host: relayUrl.hostname,
            port: relayUrl.port,
            path: '/tenants/acme/stats',
            ca: ca.certPem,
            cert: gatewayCert.certPem,
            key: gatewayCert.keyPem,
            agent: false,
            headers: { [INTERNAL_TOKEN_HEADER]: FLEET_TOKEN },
          },
          async (answer) => {
            let text = '';
            for await (const chunk of answer) text += chunk;
            resolve(JSON.parse(text));
          },
        )
        .on('error', reject);
    });
    expect(HostTenantStatsSchema.parse(stats)).toMatchObject({ tenantId: 'acme' });
  });
});
