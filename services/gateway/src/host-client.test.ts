// The gateway's reading of the host's answers, against a stand-in host on a real loopback port that
// answers what a host of another version (or a broken one) could: every answer is parsed with
// @rookery/protocol's host contract, so one off it is a clear error, not a value read through a cast.
// That the real host's answers fit the contract is services/host's server.contract.test.ts.
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { HostClient } from './host-client.js';
import { localServers } from './test-fixtures/local-servers.js';

const servers = localServers();
const TOKEN = 'host-client-token';

/** A stand-in host answering every request with `status` and `body` (a string goes as it is); the requests it saw. */
async function hostAnswering(status: number, body: unknown, headers: Record<string, string> = {}) {
  const seen: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
  const address = await servers.front(server);
  return { client: new HostClient(`http://${address}`, TOKEN), seen };
}

const STATS = {
  tenantId: 'acme',
  state: 'stopped',
  databases: [
    {
      name: 'Shop',
      databaseId: 'db-1',
      documents: 3,
      tombstones: 0,
      collections: { Users: 3 },
      lastEtag: 3,
      bytesOnDisk: 4096,
    },
    { name: 'broken', error: 'file is not a database' },
  ],
  bytesOnDisk: 8192,
};

describe('HostClient', () => {
  it('reads answers that keep the contract, sending the internal token', async () => {
    const { client, seen } = await hostAnswering(200, {
      ...STATS,
      socketPath: '/run/acme.sock',
      startedNow: true,
      startMs: 12,
    });
    expect(await client.socketOf('acme')).toEqual({ ok: true, socketPath: '/run/acme.sock' });
    expect(await client.storageOf('acme')).toEqual({ bytes: 8192 });
    expect(await client.databasesOf('acme')).toEqual({ readable: ['Shop'], unreadable: ['broken'] });
    expect(seen.map((h) => h['x-rookery-internal-token'])).toEqual([TOKEN, TOKEN, TOKEN]);
  });

  it('a wake answer off the contract is TenantUnavailable naming the field, never a socket', async () => {
    const { client } = await hostAnswering(200, {
      socketPath: '/run/acme.sock',
      startedNow: 'yes',
      startMs: 1,
    });
    expect(await client.socketOf('acme')).toMatchObject({
      ok: false,
      code: 'TenantUnavailable',
      message: expect.stringMatching(/POST \/tenants\/acme\/wake.*host contract.*startedNow/),
    });
  });

  it('a wake answer that is not JSON (a proxy in between) is TenantUnavailable, not a thrown SyntaxError', async () => {
    const { client } = await hostAnswering(502, '<html>Bad Gateway</html>', { 'content-type': 'text/html' });
    expect(await client.socketOf('acme')).toMatchObject({
      ok: false,
      code: 'TenantUnavailable',
      message: expect.stringMatching(/not JSON.*<html>/),
    });
  });

  it("a wake the host refuses keeps the host's code, detail and Retry-After", async () => {
    const problem = {
      type: 'https://rookery.dev/errors/TenantStarting',
      title: 'Tenant starting',
      status: 503,
      detail: 'Tenant acme is starting; retry in a second',
      code: 'TenantStarting',
    };
    const { client } = await hostAnswering(503, problem, { 'retry-after': '1' });
    expect(await client.socketOf('acme')).toEqual({
      ok: false,
      status: 503,
      code: 'TenantStarting',
      message: problem.detail,
      retryAfterSeconds: 1,
    });
  });

  it('stats off the contract are an InternalError naming the field, not a storage of "12" bytes', async () => {
    const { client } = await hostAnswering(200, { ...STATS, bytesOnDisk: '12' });
    await expect(client.storageOf('acme')).rejects.toMatchObject({
      code: 'InternalError',
      message: expect.stringMatching(/GET \/tenants\/acme\/stats.*bytesOnDisk/),
    });
  });

  it('a database entry that is neither read nor a failure is refused, not counted as unreadable', async () => {
    const { client } = await hostAnswering(200, { ...STATS, databases: [{ name: 'Shop' }] });
    await expect(client.databasesOf('acme')).rejects.toMatchObject({
      code: 'InternalError',
      message: expect.stringMatching(/databases\.0/),
    });
  });

  it("an error answer to stats is the host's own error for the database records, no storage for the quota", async () => {
    const problem = {
      type: 'https://rookery.dev/errors/InvalidTenantId',
      title: 'Invalid tenant id',
      status: 400,
      detail: 'The tenant id is not valid',
      code: 'InvalidTenantId',
    };
    const { client } = await hostAnswering(400, problem);
    await expect(client.databasesOf('acme')).rejects.toMatchObject({ code: 'InvalidTenantId' });
    expect(await client.storageOf('acme')).toBeNull();
  });
});
