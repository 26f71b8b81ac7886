// Bytes written as they are to the gateway over mutual TLS, for the attacks an HTTP client would
// not send (or would tidy up first): unnormalised paths, conflicting framing headers, folded
// header lines. Answers are read until the gateway closes the connection, so a request that a
// server reads as two shows as two answers.
import tls from 'node:tls';
import type { Client, Stack } from './stack.js';

export interface RawAnswer {
  /** The status code of every answer on the connection, in order. */
  statuses: number[];
  /** Everything the gateway sent. */
  text: string;
}

/**
 * Sends `bytes` (a request or several, the last with `Connection: close`) on one connection and reads
 * until the gateway closes it. `endAfterWriting` also closes the sending side at once, for a request
 * cut short that the gateway would otherwise wait on; the gateway then drops answers still to come.
 */
export async function sendRaw(
  stack: Pick<Stack, 'gateway' | 'ca'>,
  client: Client,
  bytes: string,
  options: { endAfterWriting?: boolean } = {},
): Promise<RawAnswer> {
  const { port } = new URL(stack.gateway.url);
  const socket = tls.connect({
    host: '127.0.0.1',
    port: Number(port),
    servername: 'localhost',
    ca: stack.ca.certPem,
    cert: client.certPem,
    key: client.keyPem,
  });
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', () => resolve());
    socket.once('error', reject);
  });
  if (options.endAfterWriting) socket.end(bytes);
  else socket.write(bytes);
  await new Promise<void>((resolve) => {
    socket.once('close', () => resolve());
    // A reset after the answer (the gateway refusing the rest of the bytes) still ends the reading.
    socket.once('error', () => resolve());
  });
  const text = Buffer.concat(chunks).toString('latin1');
  const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
  return { statuses, text };
}

/** A GET of `path` exactly as written, then the connection closes. */
export function rawGet(stack: Stack, client: Client, path: string): Promise<RawAnswer> {
  return sendRaw(stack, client, `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
}
