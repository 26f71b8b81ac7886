// The gateway's close() while a client's request is in flight on a kept-alive connection (the official RavenDB
// client's dispose() gives its HiLo range back with a request just as a process shuts down): the request is
// answered, and close() then resolves instead of waiting for the client to drop its idle connection (or for
// the server's keep-alive timeout, 65 s by default).
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Client, type Stack, startStack } from './test-fixtures/stack.js';

let stack: Stack;
let admin: Client;

beforeAll(async () => {
  // Kept-alive connections outlast the test: a close() that waits for one to be dropped hangs (the default,
  // 65 s, would only make it slow).
  stack = await startStack({ gatewayTimeouts: { keepAliveTimeoutMs: 600_000 } });
  admin = await stack.tenantAdmin({ id: 'closing', name: 'Closing' }, 'ops');
  const created = await admin.call('PUT', '/admin/databases', { Name: 'shop' });
  expect(created.status).toBe(201);
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

it('answers a request in flight at close(), then closes its kept-alive connection and resolves', async () => {
  // A stream far larger than what sockets and the gateway buffer, whose reader has its headers and has not read
  // yet: in flight, deterministically, when close() is called.
  const filler = 'x'.repeat(500);
  const lines = Array.from({ length: 40_000 }, (_, i) =>
    JSON.stringify({ Id: `items/${i}`, Document: { filler, '@metadata': { '@collection': 'Items' } } }),
  );
  const inserted = await admin.call('POST', '/databases/shop/bulk_insert', `${lines.join('\n')}\n`, {
    'content-type': 'application/x-ndjson',
  });
  expect(inserted.text).toContain('"Completed"');

  const streaming = await request(`${stack.gateway.url}/databases/shop/streams/docs?collection=Items`, {
    dispatcher: admin.agent,
  });
  expect(streaming.statusCode).toBe(200);
  const closing = stack.gateway.close();
  const text = await streaming.body.text();
  expect(text.trim().split('\n').at(-1)).toBe('{"@end":{"Count":40000}}');
  await closing; // hung until the client dropped its idle connection, or the server's keep-alive timeout
}, 120_000);
