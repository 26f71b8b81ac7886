// The upgrade proxy between two real servers: a stand-in tenant on a Unix socket (a `ws` server, plus
// routes that answer an upgrade with plain HTTP or not at all) and a plain HTTP front server whose
// 'upgrade' listener is proxyUpgrade (TLS and admission are the gateway's business: upgrade.test.ts).
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { TenantUnreachable } from './proxy.js';
import { unixSocket } from './tenant-pool.js';
import { localServers } from './test-fixtures/local-servers.js';
import { openWebSocket } from './test-fixtures/websocket.js';
import { proxyUpgrade, type UpgradeOutcome, WaitingClient } from './upgrade-proxy.js';

const servers = localServers();

const PROBLEM = JSON.stringify({ code: 'DatabaseNotFound', status: 404, detail: 'no such database' });

async function setup() {
  const wss = new WebSocketServer({ noServer: true });
  const tenantSockets: WebSocket[] = [];
  const seen: http.IncomingHttpHeaders[] = [];
  const held: string[] = [];
  const tenant = http.createServer((_req, res) => res.writeHead(426).end());
  tenant.on('upgrade', (req, socket, head) => {
    seen.push(req.headers);
    if (req.url === '/refuse') {
      socket.end(
        `HTTP/1.1 404 Not Found\r\ncontent-type: application/problem+json\r\ncontent-length: ${PROBLEM.length}\r\nx-rookery-work-units: 3\r\n\r\n${PROBLEM}`,
      );
      return;
    }
    if (req.url === '/hold') {
      // Never answers; read, so that the proxy letting go shows as this socket's end.
      socket.once('end', () => {
        held.push('ended');
        socket.destroy();
      });
      socket.resume();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      tenantSockets.push(ws);
      ws.on('message', (data) => ws.send(`echo:${String(data)}`));
    });
  });
  const socketPath = await servers.tenant(tenant, 'rookery-upgrade-');
  servers.defer(() => {
    for (const ws of wss.clients) ws.terminate();
  });

  const outcomes: Array<UpgradeOutcome | Error> = [];
  const front = http.createServer((_req, res) => res.writeHead(426).end());
  front.on('upgrade', (req: http.IncomingMessage, socket, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    proxyUpgrade(req, new WaitingClient(socket, head), {
      connect: unixSocket(socketPath),
      path: req.url ?? '/',
      requestId: 'req-1',
    }).then(
      (outcome) => outcomes.push(outcome),
      (error: Error) => {
        outcomes.push(error);
        socket.destroy();
      },
    );
  });
  const url = `ws://${await servers.front(front)}`;
  const closeTenant = () => new Promise<void>((resolve) => tenant.close(() => resolve()));
  return { url, outcomes, tenantSockets, seen, held, closeTenant };
}

const tunnelOf = (outcome: UpgradeOutcome | Error | undefined) => {
  if (!outcome || outcome instanceof Error || !outcome.upgraded) throw new Error(`not a tunnel: ${outcome}`);
  return outcome.tunnel;
};

describe('proxyUpgrade', () => {
  it('carries frames both ways and counts them; a close from the client closes the tenant side', async () => {
    const { url, outcomes, tenantSockets, seen } = await setup();
    const opening = await openWebSocket(`${url}/echo?x=1`, { headers: { 'x-custom': 'kept' } });
    if (opening.kind !== 'open') throw new Error(`not open: ${JSON.stringify(opening)}`);
    expect(seen[0]).toMatchObject({ 'x-custom': 'kept', 'x-request-id': 'req-1', host: 'tenant' });
    expect(seen[0]!.upgrade).toBe('websocket');
    opening.ws.send('hello');
    await expect.poll(() => opening.messages).toEqual(['echo:hello']);
    const tunnel = tunnelOf(outcomes[0]);
    const carried = tunnel.takeBytes();
    // A masked client frame of 5 bytes is 11 bytes on the wire; the server's unmasked echo of 10 is 12.
    expect(carried).toEqual({ bytesIn: 11, bytesOut: 12 });
    expect(tunnel.takeBytes()).toEqual({ bytesIn: 0, bytesOut: 0 });

    let closedOnce = 0;
    tunnel.onClose(() => closedOnce++);
    opening.ws.close(1000, 'done');
    expect((await opening.closed).code).toBe(1000);
    await expect.poll(() => tenantSockets[0]!.readyState).toBe(WebSocket.CLOSED);
    await expect.poll(() => tunnel.closed).toBe(true);
    expect(closedOnce).toBe(1);
  });

  it('cuts both sides when the tenant goes, and when the gateway cuts the tunnel', async () => {
    const { url, outcomes, tenantSockets } = await setup();
    const first = await openWebSocket(`${url}/echo`);
    if (first.kind !== 'open') throw new Error('not open');
    tenantSockets[0]!.terminate(); // the tenant process dies: no close frame
    expect((await first.closed).code).toBe(1006);
    await expect.poll(() => tunnelOf(outcomes[0]).closed).toBe(true);

    const second = await openWebSocket(`${url}/echo`);
    if (second.kind !== 'open') throw new Error('not open');
    tunnelOf(outcomes[1]).destroy(); // revocation, shutdown
    expect((await second.closed).code).toBe(1006);
    await expect.poll(() => tenantSockets[1]!.readyState).toBe(WebSocket.CLOSED);
  });

  it("relays the tenant's plain HTTP answer to an upgrade as it is, then closes", async () => {
    const { url, outcomes } = await setup();
    const opening = await openWebSocket(`${url}/refuse`);
    expect(opening).toMatchObject({ kind: 'refused', status: 404, json: { code: 'DatabaseNotFound' } });
    if (opening.kind !== 'refused') return;
    expect(opening.headers['content-type']).toBe('application/problem+json');
    expect(opening.headers['x-rookery-work-units']).toBeUndefined();
    expect(opening.headers.connection).toBe('close');
    await expect.poll(() => outcomes.length).toBe(1);
    expect(outcomes[0]).toEqual({ upgraded: false, status: 404, bytesOut: PROBLEM.length, workUnits: 3 });
  });

  it('reports a tenant that is gone as TenantUnreachable, and lets go of one the client stopped waiting for', async () => {
    const { url, outcomes, closeTenant, seen, held } = await setup();
    const impatient = new WebSocket(`${url}/hold`);
    impatient.on('error', () => {});
    await expect.poll(() => seen.length).toBe(1);
    impatient.terminate();
    await expect.poll(() => outcomes.length).toBe(1);
    expect(outcomes[0]).toBeInstanceOf(Error);
    expect(outcomes[0]).not.toBeInstanceOf(TenantUnreachable);
    await expect.poll(() => held).toEqual(['ended']);

    await closeTenant();
    const opening = await openWebSocket(`${url}/echo`);
    expect(opening.kind).toBe('failed');
    await expect.poll(() => outcomes.length).toBe(2);
    expect(outcomes[1]).toBeInstanceOf(TenantUnreachable);
  });
});
