// The load balancer's health check on a port of its own: a real HTTP server on a free port, asked as the
// load balancer asks (GET /healthz), and as anything else on the network might.
import http from 'node:http';
import net from 'node:net';
import { ProblemSchema } from '@rookery/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { type HealthServer, startHealthServer } from './health-server.js';

function get(url: string, method = 'GET'): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, type: String(response.headers['content-type']), body }),
      );
    });
    request.once('error', reject);
    request.end();
  });
}

describe('the gateway health port', () => {
  let server: HealthServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('answers GET /healthz 200 while the gateway serves, 503 GatewayStopping once it is stopping', async () => {
    let serving = true;
    server = await startHealthServer({ host: '127.0.0.1', port: 0, serving: () => serving });
    const ok = await get(`${server.url}/healthz`);
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ status: 'ok' });
    expect((await get(`${server.url}/healthz`, 'HEAD')).status).toBe(200);

    serving = false;
    const stopping = await get(`${server.url}/healthz`);
    expect(stopping.status).toBe(503);
    expect(stopping.type).toBe('application/problem+json');
    expect(ProblemSchema.parse(JSON.parse(stopping.body)).code).toBe('GatewayStopping');
  });

  it('serves nothing else: no API, no tenant, without a client certificate', async () => {
    server = await startHealthServer({ host: '127.0.0.1', port: 0, serving: () => true });
    for (const path of [
      '/',
      '/databases',
      '/databases/shop/docs?id=orders/1-A',
      '/healthz/../admin/databases',
    ]) {
      const answer = await get(`${server.url}${path}`);
      expect(answer.status, path).toBe(404);
      expect(ProblemSchema.parse(JSON.parse(answer.body)).code).toBe('RouteNotFound');
    }
    const posted = await get(`${server.url}/healthz`, 'POST');
    expect(posted.status).toBe(405);
    expect(ProblemSchema.parse(JSON.parse(posted.body)).code).toBe('MethodNotAllowed');
  });

  it('refuses a request whose headers exceed its small limit with 431, and keeps answering', async () => {
    server = await startHealthServer({ host: '127.0.0.1', port: 0, serving: () => true });
    const { port } = new URL(server.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        // One write of 8 KiB (past the 4 KiB limit): the server has read all of it when it answers, so it
        // closes with a FIN, not a reset that could overtake its answer.
        socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(8 * 1024)}\r\n\r\n`);
      });
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        text += chunk;
      });
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect((await get(`${server.url}/healthz`)).status).toBe(200);
  });
});
