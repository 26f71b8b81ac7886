// Attacks on the gateway's RavenDB TCP listener (ravendb-tcp/, docs/ravendb-compatibility.md), README.md
// beside this file: bytes written as they are over mutual TLS to the port `/info/remote-task/tcp` names —
// what is not RavenDB's protocol, a message past the size limit, a connection that says nothing or says it
// slowly, an operation other than subscriptions, callers the HTTPS port would refuse (another CA's
// certificate, a person without a two-factor session, a principal without the database), an acknowledgement
// with no batch. Each gets the protocol's answer with Rookery's code and then the connection ends; a real
// negotiation still works after them, and closing the gateway ends the connections it carries.
import tls from 'node:tls';
import { CertificateAuthority, createCertificateAuthority, issueClientCertificate } from '@rookery/pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonFrameReader } from '../ravendb-tcp/json-frames.js';
import type { Client, Stack } from '../test-fixtures/stack.js';
import { startTwoTenants } from '../test-fixtures/two-tenants.js';

const NEGOTIATION_TIMEOUT_MS = 3_000;

let stack: Stack;
let admin: Client;
let reader: Client;
let operator: Client;

beforeAll(async () => {
  ({
    stack,
    adminA: admin,
    readerA: reader,
    operator,
  } = await startTwoTenants({
    ravenTcp: { port: 0, negotiationTimeoutMs: NEGOTIATION_TIMEOUT_MS },
  }));
  const stored = await admin.call('PUT', '/databases/shop/docs?id=users/keep', {
    Name: 'Kept',
    '@metadata': { '@collection': 'Users' },
  });
  expect(stored.status).toBe(201);
  const created = await admin.call('PUT', '/databases/shop/subscriptions', {
    Name: 'kept',
    Query: 'from Users',
  });
  expect(created.status).toBe(201);
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

const header = (database = 'shop', extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    DatabaseName: database,
    Operation: 'Subscription',
    SourceNodeTag: null,
    OperationVersion: 53_000,
    AuthorizeInfo: null,
    LicensedFeatures: { DataCompression: false },
    ...extra,
  });
const options = (name: string) =>
  JSON.stringify({ SubscriptionName: name, Strategy: 'OpenIfFree', MaxDocsPerBatch: 10 });

/** A mutual-TLS connection to the RavenDB TCP port, reading the server's messages as they come. */
async function connect(who: { certPem: string; keyPem: string }) {
  const socket = tls.connect({
    host: '127.0.0.1',
    port: stack.gateway.ravenTcpPort!,
    servername: 'localhost',
    ca: stack.ca.certPem,
    cert: who.certPem,
    key: who.keyPem,
  });
  const reader = new JsonFrameReader(16 * 1024 * 1024);
  const messages: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  socket.on('data', (chunk: Buffer) => {
    for (const text of reader.push(chunk)) messages.push(JSON.parse(text));
    for (const wake of waiters.splice(0)) wake();
  });
  const closed = new Promise<void>((resolve) => {
    socket.once('close', () => {
      for (const wake of waiters.splice(0)) wake();
      resolve();
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', () => resolve());
    socket.once('error', reject);
  });
  return {
    socket,
    messages,
    closed,
    /** Resolves with the `count`-th message (1-based), or rejects when the connection closed before it. */
    async message(count: number): Promise<Record<string, unknown>> {
      while (messages.length < count) {
        if (socket.destroyed)
          throw new Error(`closed after ${messages.length} messages: ${JSON.stringify(messages)}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
      return messages[count - 1]!;
    },
  };
}

/** Negotiates and subscribes as the official client does; resolves with the connection once Accepted. */
async function subscribed(who: Client, name: string) {
  const connection = await connect(who);
  connection.socket.write(header());
  expect(await connection.message(1)).toMatchObject({ Status: 'Ok', Version: 53_000 });
  connection.socket.write(options(name));
  expect(await connection.message(2)).toMatchObject({ Type: 'ConnectionStatus', Status: 'Accepted' });
  return connection;
}

describe('RavenDB TCP attacks', () => {
  it('bytes that are not a JSON object (an HTTP request): an Invalid status naming the protocol, then the connection ends', async () => {
    const connection = await connect(admin);
    connection.socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await connection.closed;
    expect(connection.messages).toEqual([
      expect.objectContaining({
        Type: 'ConnectionStatus',
        Status: 'Invalid',
        Message: expect.stringMatching(/^InvalidRequest: .*JSON objects/),
      }),
    ]);
  });

  it('a header of 200 KB: an Error naming the 64 KiB limit before the rest is read', async () => {
    const connection = await connect(admin);
    connection.socket.write(`{"DatabaseName":"${'a'.repeat(200 * 1024)}"}`);
    await connection.closed;
    expect(connection.messages).toEqual([
      expect.objectContaining({
        Type: 'Error',
        Message: expect.stringMatching(/^PayloadTooLarge: .*65536 bytes/),
      }),
    ]);
  });

  it('slowloris: half a header and then nothing is cut at the negotiation timeout, naming it', async () => {
    const connection = await connect(admin);
    connection.socket.write('{"DatabaseName":"sh');
    await connection.closed;
    expect(connection.messages).toEqual([
      expect.objectContaining({
        Type: 'Error',
        Message: expect.stringMatching(
          new RegExp(
            `^RavenTcpNegotiationTimeout: .*${NEGOTIATION_TIMEOUT_MS} ms.*ROOKERY_RAVEN_TCP_NEGOTIATION_TIMEOUT_MS`,
          ),
        ),
      }),
    ]);
  });

  it('a negotiated connection that never sends its options is cut too', async () => {
    const connection = await connect(admin);
    connection.socket.write(header());
    expect(await connection.message(1)).toMatchObject({ Status: 'Ok' });
    await connection.closed;
    expect(connection.messages[1]).toMatchObject({
      Type: 'Error',
      Message: expect.stringMatching(/^RavenTcpNegotiationTimeout/),
    });
  });

  it('an operation other than Subscription (Replication) is refused', async () => {
    const connection = await connect(admin);
    connection.socket.write(header('shop', { Operation: 'Replication', OperationVersion: 72_001 }));
    await connection.closed;
    expect(connection.messages).toEqual([
      expect.objectContaining({
        Status: 'AuthorizationFailed',
        Message: expect.stringMatching(/only subscription workers/),
      }),
    ]);
  });

  it('an unknown protocol version is answered with the version Rookery offers instead', async () => {
    const connection = await connect(admin);
    connection.socket.write(header('shop', { OperationVersion: 99_999 }));
    expect(await connection.message(1)).toMatchObject({ Status: 'TcpVersionMismatch', Version: 53_000 });
    connection.socket.write(header('shop', { OperationVersion: 53_000 }));
    expect(await connection.message(2)).toMatchObject({ Status: 'Ok', Version: 53_000 });
    connection.socket.destroy();
  });

  it("a certificate of another CA is refused in the TLS handshake (the HTTPS port's CA): not one message comes", async () => {
    const otherCa = await CertificateAuthority.fromPem(
      await createCertificateAuthority({ commonName: 'Elsewhere' }),
    );
    const stranger = await issueClientCertificate(otherCa, {
      principalId: 'p-stranger',
      tenantId: 'acme',
      kind: 'program',
      name: 'stranger',
      validDays: 1,
    });
    // With TLS 1.3 the client's side of the handshake completes before the server has checked its
    // certificate: the refusal is then the connection's end, before any answer.
    const connection = await connect(stranger).catch(() => null);
    if (connection) {
      connection.socket.write(header());
      await connection.closed;
      expect(connection.messages).toEqual([]);
    }
  });

  it('a person without a two-factor session: AuthorizationFailed naming TwoFactorRequired', async () => {
    const { client: person } = await stack.person('tcp-person', 'acme');
    const connection = await connect(person);
    connection.socket.write(header());
    await connection.closed;
    expect(connection.messages).toEqual([
      expect.objectContaining({
        Status: 'AuthorizationFailed',
        Message: expect.stringMatching(/^TwoFactorRequired: /),
      }),
    ]);
  });

  it('a principal without the database (read-only on shop, asking for another): AuthorizationFailed, Forbidden', async () => {
    const connection = await connect(reader);
    connection.socket.write(header('secret'));
    await connection.closed;
    expect(connection.messages).toEqual([
      expect.objectContaining({
        Status: 'AuthorizationFailed',
        Message: expect.stringMatching(/^Forbidden: .*secret/),
      }),
    ]);
  });

  it('an Acknowledge with no batch waiting: an Invalid status, the connection ends, the subscription is intact', async () => {
    const before = await admin.call('GET', '/databases/shop/subscriptions/kept');
    const connection = await subscribed(admin, 'kept');
    // The subscription's one document comes as a batch; acknowledging it twice is one ack too many.
    expect(await connection.message(3)).toMatchObject({ Type: 'Data' });
    expect(await connection.message(4)).toMatchObject({ Type: 'EndOfBatch' });
    connection.socket.write(JSON.stringify({ Type: 'Acknowledge', ChangeVector: null }));
    expect(await connection.message(5)).toMatchObject({ Type: 'Confirm' });
    connection.socket.write(JSON.stringify({ Type: 'Acknowledge', ChangeVector: null }));
    await connection.closed;
    expect(connection.messages[5]).toMatchObject({
      Type: 'ConnectionStatus',
      Status: 'Invalid',
      Message: expect.stringMatching(/^InvalidRequest: .*no batch waiting/),
    });
    const after = await admin.call('GET', '/databases/shop/subscriptions/kept');
    expect(after.json.LastAcknowledgedEtag).toBeGreaterThanOrEqual(
      before.json.LastAcknowledgedEtag as number,
    );
    const kept = await admin.call('GET', '/databases/shop/docs?id=users/keep');
    expect(kept.status).toBe(200);
  });

  it("connections do not escape the tenant's request count: each subscription connection is one, as an upgrade is", async () => {
    const counted = async () => {
      const text = (await operator.call('GET', '/metrics')).text;
      return Number(/^rookery_gateway_tenant_requests_total\{tenant="acme"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    };
    const before = await counted();
    const connection = await subscribed(admin, 'kept');
    // The tenant refusing (no such subscription) is a request it answered, as a refused upgrade is.
    const unknown = await connect(admin);
    unknown.socket.write(header());
    expect(await unknown.message(1)).toMatchObject({ Status: 'Ok' });
    unknown.socket.write(options('no-such-subscription'));
    expect(await unknown.message(2)).toMatchObject({ Type: 'ConnectionStatus', Status: 'NotFound' });
    // Both were counted before their answer was written.
    expect((await counted()) - before).toBe(2);
    connection.socket.destroy();
    await Promise.all([connection.closed, unknown.closed]);
  });

  it('an IPv6 literal in the Host header: never a Url the client cannot connect to, but a typed refusal saying what to use', async () => {
    const info = '/info/remote-task/tcp?database=shop&remote-task=kept';
    const port = stack.gateway.ravenTcpPort!;
    // The client reads the Url's hostname, "[::1]" with its brackets, and hands it to tls.connect, which
    // looks it up as a name (ENOTFOUND) and retries for ever: it is refused instead, and the worker stops.
    for (const host of ['[::1]:8443', '[2001:db8::5]', '[::ffff:127.0.0.1]:8443']) {
      const refused = await admin.call('GET', info, undefined, { host });
      expect([refused.status, refused.json.code], host).toEqual([501, 'RavenTcpNotSupported']);
      expect(refused.json.detail).toMatch(/IPv6 address.*host name/);
    }
    for (const [host, name] of [
      ['localhost:8443', 'localhost'],
      ['LocalHost', 'localhost'],
      ['127.0.0.1', '127.0.0.1'],
    ] as const) {
      const answered = await admin.call('GET', info, undefined, { host });
      expect(answered.status, host).toBe(200);
      const url = new URL(answered.json.Url as string);
      expect([url.hostname, url.port]).toEqual([name, String(port)]);
    }
  });

  it('a worker that sends its options and leaves at once does not leave the subscription held', async () => {
    expect(
      (await admin.call('PUT', '/databases/shop/subscriptions', { Name: 'left', Query: 'from Users' }))
        .status,
    ).toBe(201);
    const leaving = await connect(admin);
    leaving.socket.write(header());
    expect(await leaving.message(1)).toMatchObject({ Status: 'Ok' });
    // Gone while the gateway admits it and opens the tenant's socket (or just after).
    leaving.socket.end(options('left'));
    leaving.socket.destroy();
    // WaitForFree waits for the consumer before it: accepted only once the gateway let the first one go.
    const next = await connect(admin);
    next.socket.write(header());
    expect(await next.message(1)).toMatchObject({ Status: 'Ok' });
    next.socket.write(
      JSON.stringify({ SubscriptionName: 'left', Strategy: 'WaitForFree', MaxDocsPerBatch: 10 }),
    );
    expect(await next.message(2)).toMatchObject({ Type: 'ConnectionStatus', Status: 'Accepted' });
    next.socket.destroy();
  });

  it('closing the gateway ends the TCP connections it carries and those still negotiating', async () => {
    // A fresh subscription, so that no earlier connection of this file may still hold one.
    expect(
      (await admin.call('PUT', '/databases/shop/subscriptions', { Name: 'last', Query: 'from Users' }))
        .status,
    ).toBe(201);
    const carried = await subscribed(admin, 'last');
    const negotiating = await connect(admin);
    await stack.gateway.close();
    await carried.closed;
    await negotiating.closed;
    expect(negotiating.messages).toEqual([]);
  });
});
