// A WebSocket opened with the real `ws` client, settled with what the server did: switched protocols
// (an open socket, with a promise of how it closes), answered with an HTTP response instead (its status,
// headers and JSON body), or failed below HTTP (a TLS refusal, a reset).
import type { IncomingHttpHeaders } from 'node:http';
import WebSocket, { type ClientOptions } from 'ws';

export interface Closed {
  code: number;
  reason: string;
}

export type Opening =
  | { kind: 'open'; ws: WebSocket; closed: Promise<Closed>; messages: string[] }
  | { kind: 'refused'; status: number; headers: IncomingHttpHeaders; json: Record<string, unknown> }
  | { kind: 'failed'; error: Error };

export function openWebSocket(url: string, options: ClientOptions = {}): Promise<Opening> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, options);
    // Every text frame the server sends: tests look at them after the fact.
    const messages: string[] = [];
    ws.on('message', (data) => messages.push(String(data)));
    const closed = new Promise<Closed>((resolveClosed) =>
      ws.once('close', (code, reason) => resolveClosed({ code, reason: String(reason) })),
    );
    ws.once('open', () => resolve({ kind: 'open', ws, closed, messages }));
    ws.once('unexpected-response', (_request, response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      response.once('end', () => {
        let json: Record<string, unknown> = {};
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {
          // not JSON
        }
        resolve({ kind: 'refused', status: response.statusCode ?? 0, headers: response.headers, json });
        ws.terminate();
      });
    });
    ws.once('error', (error) => resolve({ kind: 'failed', error }));
  });
}

/** A WebSocket to the gateway over TLS, with a client certificate (none: `pems` null). */
export function openThroughGateway(
  gatewayUrl: string,
  caPem: string,
  pems: { certPem: string; keyPem: string } | null,
  path: string,
  headers: Record<string, string> = {},
): Promise<Opening> {
  // `servername` goes through to tls.connect (ws's types do not list it): the certificate names localhost.
  const options: ClientOptions & { servername: string } = {
    ca: caPem,
    ...(pems ? { cert: pems.certPem, key: pems.keyPem } : {}),
    servername: 'localhost',
    headers,
  };
  return openWebSocket(`${gatewayUrl.replace(/^https:/, 'wss:')}${path}`, options);
}
