// Chaos 7 (README.md beside this file): two gateways of a fleet — this process's and a process of its own —
// on one PostgreSQL, while a sync-mode writer runs through both. What is per person or per tenant must hold
// for the two together: a two-factor code opens one session whichever gateway it reaches, and every
// request through either is counted once. (The request rate and live connections across gateways, with
// frozen clocks, are src/multi-gateway.postgres.test.ts's: README.md names the tests.)
import { controlPaths } from '@rookery/control-store';
import { loadOrCreateMasterKey, sealSecret } from '@rookery/pki';
import { generate, generateSecret } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  acknowledgedMore,
  type ChaosFleet,
  expectAcknowledgedKept,
  GIVE_UP_MS,
  startChaosFleet,
  startWriter,
  type TenantAdmin,
  type Writer,
} from '../test-fixtures/chaos.js';
import { type Connection, gatewayClients } from '../test-fixtures/gateway-clients.js';

describe('chaos: two gateways of a fleet under a sync-mode writer', () => {
  let chaos: ChaosFleet;
  let busy: TenantAdmin;
  let writer: Writer;
  /** Connections to the forked gateway with certificates made in the test. */
  let toSecond: ReturnType<typeof gatewayClients>;

  beforeAll(async () => {
    chaos = await startChaosFleet('chaos_gateways');
    toSecond = gatewayClients(chaos.fleet.store, chaos.fleet.ca, () => chaos.second.url);
    busy = await chaos.tenant('busy');
    writer = startWriter(busy, 'busy');
    await acknowledgedMore(writer, 10);
  }, 300_000);

  afterAll(async () => {
    await writer?.stop();
    await toSecond?.close();
    await chaos?.close();
  }, 120_000);

  /** A person of `tenantId` with an enrolled authenticator, and their connections to both gateways. */
  async function person(
    name: string,
    tenantId: string,
  ): Promise<{ via: [Connection, Connection]; secret: string }> {
    const client = await chaos.fleet.clients.client({
      tenantId,
      kind: 'person',
      name,
      role: { kind: 'tenant-admin' },
    });
    const secret = generateSecret();
    const masterKey = await loadOrCreateMasterKey(controlPaths(chaos.fleet.dir).masterKey);
    await chaos.fleet.store.setTotpSecret(
      client.principal.id,
      sealSecret(masterKey, secret, client.principal.id),
    );
    return { via: [client, toSecond.connect(client)], secret };
  }

  it('7a. a two-factor code that opened a session through one gateway is refused through the other, and one code sent to both at once opens one session', async () => {
    const { via, secret } = await person('ada', 'busy');
    const code = await generate({ secret });
    expect((await via[0].call('POST', '/auth/2fa', { code, binding: 'certificate' })).status).toBe(201);
    const replayed = await via[1].call('POST', '/auth/2fa', { code, binding: 'certificate' });
    expect([replayed.status, replayed.json.code]).toEqual([401, 'TwoFactorCodeReused']);
    // The session opened through the first gateway is the store's: the second lets the certificate in.
    expect((await via[1].call('GET', '/databases')).status).toBe(200);

    const raced = await person('grace', 'busy');
    const once = await generate({ secret: raced.secret });
    const replies = await Promise.all(
      [0, 1, 0, 1].map((g) =>
        raced.via[g]!.call('POST', '/auth/2fa', { code: once, binding: 'certificate' }),
      ),
    );
    expect(replies.map((r) => `${r.status} ${r.json.code ?? ''}`).sort()).toEqual([
      '201 ',
      '401 TwoFactorCodeReused',
      '401 TwoFactorCodeReused',
      '401 TwoFactorCodeReused',
    ]);
  });

  it('7b. usage adds up exactly across the two gateways: each request counted once', async () => {
    const from = Date.now() - 60_000;
    const metered = await chaos.tenant('metered'); // one request: its database, through the first gateway
    const sent = { first: 1, second: 0 };
    for (let i = 0; i < 12; i++) {
      const g = i % 3 === 0 ? 1 : 0;
      expect((await metered.via[g].call('GET', `/databases/shop/docs?id=none/${i}`)).status).toBe(404);
      if (g === 0) sent.first++;
      else sent.second++;
    }
    const total = sent.first + sent.second;
    // Each gateway flushes on its own timer (the forked one every 5 s): wait for the sum, then check it
    // did not overshoot — a flush adds its whole count at once, so a double count shows here.
    const counted = async () => {
      const rows = await chaos.fleet.store.usage('metered', from, Date.now() + 60_000);
      return rows.reduce((n, r) => n + r.requests, 0);
    };
    await expect.poll(counted, { timeout: GIVE_UP_MS, interval: 200 }).toBeGreaterThanOrEqual(total);
    await chaos.fleet.gateway.flushUsage();
    expect(await counted()).toBe(total);
  });

  it('kept every write the busy tenant’s writer had acknowledged meanwhile, through both gateways', async () => {
    await acknowledgedMore(writer, 10);
    await writer.stop();
    await expectAcknowledgedKept('chaos 7', [{ tenant: busy, writer }]);
    expect(writer.refused).toEqual([]);
  }, 300_000);
});
