// The control API on a real HTTP server on an ephemeral port, over a fresh
// embedded control plane. Stands in for the gateway: the test names the
// calling principal and this server hands it to the API, as the gateway does
// after authenticating a certificate. (The header exists only in this fixture.)
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Principal } from '@rookery/control-store';
import { type EmbeddedControl, openEmbeddedControl } from '@rookery/control-store/testing';
import { type JobQueue, jobQueueFile, openSqliteJobQueue } from '@rookery/jobs';
import { ROOKERY_JOB_TYPES, type RookeryJobTypes } from '@rookery/protocol';
import pino from 'pino';
import { buildControlApi, type ControlApi } from '../api/app.js';

const AS_HEADER = 'x-test-principal';

export interface Reply {
  status: number;
  headers: Headers;
  json: Record<string, unknown> & { code?: string };
}

export interface ControlApiHarness extends EmbeddedControl {
  api: ControlApi;
  /** The embedded job queue the API reads and enqueues on (no worker runs in these tests). */
  jobs: JobQueue<RookeryJobTypes>;
  call(as: Principal, method: string, path: string, body?: unknown): Promise<Reply>;
}

export async function startControlApi(): Promise<ControlApiHarness> {
  const control = await openEmbeddedControl();
  const jobs = await openSqliteJobQueue({ file: jobQueueFile(control.dataDir), types: ROOKERY_JOB_TYPES });
  const api = await buildControlApi({ ...control, jobs, logger: pino({ level: 'silent' }) });
  const server = http.createServer((request, response) => {
    void (async () => {
      const principal = await control.store.getPrincipal(String(request.headers[AS_HEADER]));
      if (!principal) throw new Error(`the test named no known principal (${request.headers[AS_HEADER]})`);
      await api.serve(request, response, { principal, requestId: 'test' });
    })().catch((error: unknown) => {
      response.writeHead(599).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    ...control,
    api,
    jobs,
    async call(as, method, path, body) {
      const response = await fetch(base + path, {
        method,
        headers: {
          [AS_HEADER]: as.id,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, json: text ? JSON.parse(text) : {} };
    },
    async close() {
      await new Promise((resolve) => server.close(resolve));
      await api.close();
      await jobs.close();
      await control.close();
    },
  };
}

/**
 * What most API tests start from: an operator, and the tenant `acme` with its tenant admin
 * (`acme-admin`). Tests add their own tenants and principals after.
 */
export async function withOperatorAndAcme(
  h: ControlApiHarness,
): Promise<{ operator: Principal; admin: Principal }> {
  await h.store.createTenant({ id: 'acme', name: 'Acme' });
  const operator = await h.store.createPrincipal({
    tenantId: null,
    kind: 'program',
    name: 'ops',
    role: { kind: 'operator' },
  });
  const admin = await h.store.createPrincipal({
    tenantId: 'acme',
    kind: 'program',
    name: 'acme-admin',
    role: { kind: 'tenant-admin' },
  });
  return { operator, admin };
}
