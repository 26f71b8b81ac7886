// The host's internal API keeps the contract its readers parse (@rookery/protocol host.ts): every answer
// of a real host, over a real tenant process, goes through the schema the gateway and the worker use, and
// every error answer is problem+json. The readers' side (answers off the contract) is the gateway's
// host-client.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import {
  HostPurgeAnswerSchema,
  HostStopAnswerSchema,
  HostTenantListSchema,
  HostTenantStatsSchema,
  HostWakeAnswerSchema,
  INTERNAL_TOKEN_HEADER,
  ProblemSchema,
} from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadHostConfig } from './config.js';
import { buildHostServer } from './server.js';
import { TenantSupervisor } from './supervisor.js';
import { sourceTenantCommand } from './tenant-command.js';
import { TenantClient } from './test-fixtures/tenant-client.js';

const TOKEN = 'contract-token-0123456789';
const tmp = makeTempDir('rookery-host-contract-');
const supervisor = new TenantSupervisor(
  loadHostConfig(
    {},
    {
      dataDir: tmp.dir,
      internalToken: TOKEN,
      tenantLogLevel: 'error',
      spareProcesses: 0,
      idleStopMs: 0,
      startDeadlineMs: 60_000,
    },
  ),
  { logger: pino({ level: 'silent' }), command: () => sourceTenantCommand() },
);
const host = buildHostServer({ supervisor, internalToken: TOKEN, logger: pino({ level: 'silent' }) });
const clients: TenantClient[] = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await host.close();
  await supervisor.shutdown(5_000);
  tmp.cleanup();
});

const call = async (method: 'GET' | 'POST' | 'DELETE', url: string, token: string | null = TOKEN) => {
  const reply = await host.inject({
    method,
    url,
    headers: token === null ? {} : { [INTERNAL_TOKEN_HEADER]: token },
  });
  return { status: reply.statusCode, body: reply.json() as unknown };
};

describe("the host's answers keep @rookery/protocol's host contract", () => {
  it('wake, stats (a read and an unreadable database), list, stop and purge', async () => {
    let wake = await call('POST', '/tenants/acme/wake');
    // The start deadline is long, but a start answered TenantStarting is the contract too: ask again.
    while (wake.status === 503) {
      expect(ProblemSchema.parse(wake.body).code).toBe('TenantStarting');
      wake = await call('POST', '/tenants/acme/wake');
    }
    expect(wake.status).toBe(200);
    const woken = HostWakeAnswerSchema.parse(wake.body);
    const tenant = new TenantClient(woken.socketPath);
    clients.push(tenant);
    expect((await tenant.call('PUT', '/admin/databases', { Name: 'Shop' })).status).toBe(201);
    expect((await tenant.call('PUT', '/databases/shop/docs?id=users/1', { Name: 'Ada' })).status).toBe(201);
    // A database directory whose docs.db is not a database: the stats say so, for that one only.
    const broken = path.join(tmp.dir, 'tenants', 'acme', 'databases', 'broken');
    fs.mkdirSync(broken, { recursive: true });
    fs.writeFileSync(path.join(broken, 'docs.db'), 'not a database');

    const stats = await call('GET', '/tenants/acme/stats');
    expect(stats.status).toBe(200);
    const parsed = HostTenantStatsSchema.parse(stats.body);
    expect(parsed).toMatchObject({ tenantId: 'acme', state: 'running' });
    expect(parsed.databases).toEqual([
      { name: 'broken', error: expect.any(String) },
      expect.objectContaining({ name: 'Shop', documents: 1 }),
    ]);

    const list = await call('GET', '/tenants');
    expect(HostTenantListSchema.parse(list.body).tenants).toEqual([
      expect.objectContaining({ tenantId: 'acme', state: 'running', pid: expect.any(Number) }),
    ]);

    const stop = await call('POST', '/tenants/acme/stop');
    expect(HostStopAnswerSchema.parse(stop.body)).toEqual({
      tenantId: 'acme',
      state: 'stopped',
      wasRunning: true,
    });
    // Stopped: the list's nullable fields are null, and still the contract.
    expect(HostTenantListSchema.parse((await call('GET', '/tenants')).body).tenants).toEqual([
      expect.objectContaining({ tenantId: 'acme', state: 'stopped', pid: null, readySince: null }),
    ]);

    const purge = await call('DELETE', '/tenants/acme');
    expect(HostPurgeAnswerSchema.parse(purge.body)).toEqual({
      tenantId: 'acme',
      wasRunning: false,
      removedFiles: true,
    });
  }, 120_000);

  it('every error answer is problem+json', async () => {
    for (const [method, url, token] of [
      ['POST', '/tenants/Not-A-Tenant/wake', TOKEN],
      ['GET', '/tenants/acme/stats', 'wrong-token'],
      ['GET', '/tenants/acme/stats', null],
      ['GET', '/no/such/route', TOKEN],
    ] as const) {
      const answer = await call(method, url, token);
      expect(answer.status, url).toBeGreaterThanOrEqual(400);
      expect(ProblemSchema.safeParse(answer.body).success, url).toBe(true);
    }
  });
});
