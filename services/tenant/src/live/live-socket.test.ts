import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { CLOSE_TOO_SLOW, LiveSocket } from './live-socket.js';

// LiveSocket over a plain ws server: what the changes feed relies on for consumers that fall behind.
let server: WebSocketServer;
let url: string;

beforeEach(async () => {
  server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((resolve) => server.once('listening', resolve));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  for (const client of server.clients) client.terminate();
  await new Promise((resolve) => server.close(resolve));
});

/** A client and the server's LiveSocket for it. */
async function connect(maxBufferedBytes: number): Promise<{ client: WebSocket; live: LiveSocket }> {
  const accepted = new Promise<WebSocket>((resolve) => server.once('connection', resolve));
  const client = new WebSocket(url);
  await new Promise((resolve) => client.once('open', resolve));
  const live = new LiveSocket(await accepted, { pingIntervalMs: 60_000, maxBufferedBytes });
  return { client, live };
}

it('closes a consumer that does not read (1013) instead of buffering for it without end', async () => {
  const { client, live } = await connect(256 * 1024);
  const closed = new Promise<number>((resolve) => client.once('close', (code) => resolve(code)));
  // The client stops reading: its socket's buffers fill, then the server's.
  (client as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
  const message = { Type: 'DocumentChange', Value: { Padding: 'x'.repeat(8 * 1024) } };
  let sent = 0;
  while (live.send(message)) {
    sent++;
    // Let the socket flush what it can, as commits arriving over time would.
    if (sent % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  expect(live.socket.bufferedAmount).toBeGreaterThan(256 * 1024);
  // Nothing more is queued once the socket is closing.
  expect(live.send(message)).toBe(false);
  (client as unknown as { _socket: { resume(): void } })._socket.resume();
  expect(await closed).toBe(CLOSE_TOO_SLOW);
});

it('sends to a consumer that keeps up', async () => {
  const { client, live } = await connect(256 * 1024);
  const received: unknown[] = [];
  client.on('message', (data) => received.push(JSON.parse(String(data))));
  for (let i = 0; i < 100; i++) expect(live.send({ Type: 'Confirm', CommandId: i })).toBe(true);
  while (received.length < 100) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(received.at(-1)).toEqual({ Type: 'Confirm', CommandId: 99 });
  live.close(1000, 'done');
});
