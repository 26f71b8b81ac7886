// HTTP request smuggling through the gateway to the tenant, written byte for byte on a raw mutual-TLS
// socket: framing the gateway and the tenant could read differently (Content-Length with
// Transfer-Encoding, two lengths, folded or misspelt Transfer-Encoding, bare CR or LF line ends,
// chunks that lie about their size) carrying a second request, a PUT of `smuggled/<n>`, hidden in
// the body. Each must be refused with one 400 and the connection closed, and the smuggled document
// must not exist; honest framing (a tab before the value, chunk extensions, pipelining) must still
// work, and a body must reach the tenant as data however much it looks like a request. Node's strict
// HTTP parser (llhttp, never `insecureHTTPParser`) refuses the malformed ones at the gateway, and the
// gateway frames what it sends the tenant itself (README.md beside this file).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendRaw } from '../test-fixtures/raw-tls.js';
import type { Client, Stack } from '../test-fixtures/stack.js';
import { startTwoTenants } from '../test-fixtures/two-tenants.js';

let stack: Stack;
let adminA: Client;

beforeAll(async () => {
  ({ stack, adminA } = await startTwoTenants());
  const put = await adminA.call('PUT', '/databases/shop/docs?id=users/1', {
    Name: 'Ada',
    '@metadata': { '@collection': 'Users' },
  });
  expect(put.status).toBe(201);
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

const HEAD = 'POST /databases/shop/queries HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n';
const QUERY = '{"Query":"from Users"}';
const chunk = (s: string) => `${s.length.toString(16)}\r\n${s}\r\n`;
const smuggled = (n: number) =>
  `PUT /databases/shop/docs?id=smuggled/${n} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`;

const ATTACKS: readonly [name: string, bytes: string][] = [
  [
    'Content-Length and Transfer-Encoding: chunked (CL.TE)',
    `${HEAD}Content-Length: ${`0\r\n\r\n${smuggled(1)}`.length}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n${smuggled(1)}`,
  ],
  [
    'Transfer-Encoding: chunked and a short Content-Length (TE.CL)',
    `${HEAD}Transfer-Encoding: chunked\r\nContent-Length: 4\r\nConnection: close\r\n\r\n${chunk(smuggled(2))}0\r\n\r\n`,
  ],
  [
    'two different Content-Length headers',
    `${HEAD}Content-Length: ${QUERY.length}\r\nContent-Length: ${QUERY.length + smuggled(3).length}\r\nConnection: close\r\n\r\n${QUERY}${smuggled(3)}`,
  ],
  [
    'a Content-Length list',
    `${HEAD}Content-Length: ${QUERY.length}, ${QUERY.length + smuggled(4).length}\r\nConnection: close\r\n\r\n${QUERY}${smuggled(4)}`,
  ],
  [
    'Transfer-Encoding folded onto a continuation line (obs-fold)',
    `${HEAD}Content-Length: ${QUERY.length}\r\nTransfer-Encoding:\r\n chunked\r\nConnection: close\r\n\r\n${QUERY}${smuggled(5)}`,
  ],
  [
    'Transfer-Encoding: xchunked',
    `${HEAD}Transfer-Encoding: xchunked\r\nContent-Length: ${QUERY.length}\r\nConnection: close\r\n\r\n${QUERY}${smuggled(6)}`,
  ],
  [
    'Transfer-Encoding: chunked, identity',
    `${HEAD}Transfer-Encoding: chunked, identity\r\nConnection: close\r\n\r\n${chunk(QUERY)}0\r\n\r\n${smuggled(7)}`,
  ],
  [
    'a space before the colon of Transfer-Encoding',
    `${HEAD}Transfer-Encoding : chunked\r\nContent-Length: ${QUERY.length}\r\nConnection: close\r\n\r\n${QUERY}${smuggled(8)}`,
  ],
  [
    'a chunk that claims more bytes than it holds',
    `${HEAD}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${(QUERY.length + 1000).toString(16)}\r\n${QUERY}\r\n0\r\n\r\n${smuggled(9)}`,
  ],
  [
    'Transfer-Encoding in an HTTP/1.0 request',
    `POST /databases/shop/queries HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk(QUERY)}0\r\n\r\n${smuggled(10)}`,
  ],
  [
    'a bare CR inside a header line',
    `${HEAD}X-A: a\rContent-Length: 0\r\nContent-Length: ${QUERY.length}\r\nConnection: close\r\n\r\n${QUERY}${smuggled(11)}`,
  ],
  [
    'bare LF line ends',
    `POST /databases/shop/queries HTTP/1.1\nHost: localhost\nContent-Type: application/json\nContent-Length: ${QUERY.length}\nConnection: close\n\n${QUERY}${smuggled(12)}`,
  ],
  [
    'a folded ordinary header',
    `${HEAD}X-Folded: a\r\n b\r\nContent-Length: ${QUERY.length}\r\nConnection: close\r\n\r\n${QUERY}${smuggled(13)}`,
  ],
];

describe('request smuggling through the gateway', () => {
  it('refuses every ambiguous framing with one 400 and a closed connection; no smuggled request runs', async () => {
    for (const [name, bytes] of ATTACKS) {
      // A chunk that claims more than it holds would wait for the rest: the sending side is closed.
      const answer = await sendRaw(stack, adminA, bytes, { endAfterWriting: name.startsWith('a chunk') });
      expect({ name, statuses: answer.statuses }).toEqual({ name, statuses: [400] });
      expect(answer.text, name).toMatch(/^HTTP\/1\.1 400 Bad Request\r\nConnection: close\r\n/);
    }
    for (let n = 1; n <= ATTACKS.length; n++) {
      const read = await adminA.call('GET', `/databases/shop/docs?id=smuggled/${n}`);
      expect({ n, status: read.status }).toEqual({ n, status: 404 });
    }
  });

  it('still serves honest framing: a tab before a value, chunk extensions, pipelined requests in order', async () => {
    const tab = await sendRaw(
      stack,
      adminA,
      `${HEAD}Transfer-Encoding:\tchunked\r\nConnection: close\r\n\r\n${chunk(QUERY)}0\r\n\r\n`,
    );
    expect(tab.statuses).toEqual([200]);
    const extension = await sendRaw(
      stack,
      adminA,
      `${HEAD}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${QUERY.length.toString(16)};x=y\r\n${QUERY}\r\n0\r\n\r\n`,
    );
    expect(extension.statuses).toEqual([200]);
    const pipelined = await sendRaw(
      stack,
      adminA,
      `${HEAD}Content-Length: ${QUERY.length}\r\n\r\n${QUERY}GET /databases/shop/docs?id=users/404 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
    );
    expect(pipelined.statuses).toEqual([200, 404]);
    expect(pipelined.text).toContain('"code":"DocumentNotFound"');
  });

  it('stores a chunked body that spells out a request as data, byte for byte', async () => {
    const document = JSON.stringify({
      Note: `\r\n0\r\n\r\n${smuggled(99)}`,
      '@metadata': { '@collection': 'Notes' },
    });
    const put = await sendRaw(
      stack,
      adminA,
      `PUT /databases/shop/docs?id=notes/1 HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunk(document.slice(0, 20))}${chunk(document.slice(20))}0\r\n\r\n`,
    );
    expect(put.statuses).toEqual([201]);
    const read = await adminA.call('GET', '/databases/shop/docs?id=notes/1');
    expect(JSON.stringify(read.json)).toContain(JSON.stringify(`\r\n0\r\n\r\n${smuggled(99)}`).slice(1, -1));
    expect((await adminA.call('GET', '/databases/shop/docs?id=smuggled/99')).status).toBe(404);
  });

  it("never hands the rest of a body cut short to the next request on the tenant's connection", async () => {
    for (let round = 0; round < 5; round++) {
      // 200 bytes announced, a request's worth sent: the gateway's connection to the tenant carries a
      // request still waiting for its body when the client goes away.
      const cut = smuggled(200 + round);
      await sendRaw(
        stack,
        adminA,
        `PUT /databases/shop/docs?id=cut/${round} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${cut.length + 200}\r\n\r\n${cut}`,
        { endAfterWriting: true },
      );
      const next = await adminA.call('GET', '/databases/shop/docs?id=users/1');
      expect(next.status).toBe(200);
      expect(JSON.stringify(next.json)).toContain('Ada');
      expect((await adminA.call('GET', `/databases/shop/docs?id=smuggled/${200 + round}`)).status).toBe(404);
      expect((await adminA.call('GET', `/databases/shop/docs?id=cut/${round}`)).status).toBe(404);
    }
  });
});
