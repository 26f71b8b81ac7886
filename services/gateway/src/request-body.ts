// A request's body read whole, for the few places that need all of it before acting: the gateway's own
// JSON routes, and a small PUT or DELETE the proxy holds so that it can send it again (proxy.ts).
import type http from 'node:http';

/**
 * The body's bytes, or null as soon as it passes `maxBytes` (the caller says what that means). Rejects
 * when the client goes away before the end.
 */
export async function readBody(request: http.IncomingMessage, maxBytes: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
