// The ClientHello reader against real ClientHellos: Node's TLS client's first bytes, caught by a plain TCP
// server, and what is not one.
import net from 'node:net';
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import { readClientHello } from './client-hello.js';

/** The first bytes a real TLS client sends, as the relay port's front receives them. */
async function helloBytes(options: tls.ConnectionOptions): Promise<Buffer> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  try {
    const received = new Promise<Buffer>((resolve) =>
      server.once('connection', (socket) => {
        let bytes = Buffer.alloc(0);
        socket.on('data', (chunk: Buffer) => {
          bytes = Buffer.concat([bytes, chunk]);
          if (readClientHello(bytes) !== 'incomplete') {
            socket.destroy();
            resolve(bytes);
          }
        });
      }),
    );
    const client = tls.connect({ host: '127.0.0.1', port, ...options });
    client.on('error', () => {});
    const bytes = await received;
    client.destroy();
    return bytes;
  } finally {
    server.close();
  }
}

describe('readClientHello', () => {
  it('reads the server name and the ALPN protocols of a real ClientHello', async () => {
    const bytes = await helloBytes({ servername: 'acme.tenant.rookery', ALPNProtocols: ['rookery-relay/7'] });
    expect(readClientHello(bytes)).toEqual({ serverName: 'acme.tenant.rookery', alpn: ['rookery-relay/7'] });
  });

  it('has no name when the client sent none', async () => {
    const bytes = await helloBytes({});
    expect(readClientHello(bytes)).toEqual({ serverName: null, alpn: [] });
  });

  it('waits for the rest of the record, byte by byte', async () => {
    const bytes = await helloBytes({ servername: 'acme.tenant.rookery' });
    for (let n = 0; n < bytes.length; n++) expect(readClientHello(bytes.subarray(0, n))).toBe('incomplete');
  });

  it('is no hello for plain HTTP, a record of another type, or fields running past the record', async () => {
    expect(readClientHello(Buffer.from('GET / HTTP/1.1\r\n\r\n'))).toBeNull();
    expect(readClientHello(Buffer.from([0x17, 3, 3, 0, 1, 0]))).toBeNull();
    // A handshake record whose ClientHello claims more bytes than the record holds.
    expect(readClientHello(Buffer.from([0x16, 3, 1, 0, 4, 1, 0, 0xff, 0xff]))).toBeNull();
    const bytes = await helloBytes({ servername: 'acme.tenant.rookery' });
    const lying = Buffer.from(bytes);
    lying.writeUInt16BE(0xffff, lying.length - 2 - 0); // garbage in the last extension's tail
    expect(() => readClientHello(lying)).not.toThrow();
  });
});
