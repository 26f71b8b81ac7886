// A real tenant server for end-to-end tests of its HTTP and live APIs: built on a temporary data
// directory, listening on a loopback port, usually with one database created.
import { makeTempDir } from '@rookery/testkit';
import { afterAll, beforeAll } from 'vitest';
import { loadConfig } from '../config.js';
import { buildTenantServer, type TenantServer, type TenantServerOptions } from '../server.js';
import { type Call, httpClient } from './http-client.js';

export interface TestTenantOptions {
  /** A database created once the server first listens. */
  database?: string;
  /** Configuration beyond the data directory, port 0 and silent logs (body limits…). */
  config?: Parameters<typeof loadConfig>[1];
  /** E.g. a shorter ping interval. */
  server?: TenantServerOptions;
}

export interface TestTenant {
  /** The server listening now. */
  readonly server: TenantServer;
  /** `http://127.0.0.1:{port}` of the server listening now. */
  readonly base: string;
  /** Calls the server listening now. */
  readonly call: Call;
  /** The ws:// URL of `path` on the server listening now. */
  wsUrl(path: string): string;
  /** Builds a server on the data directory (the same one every time) and listens. */
  start(): Promise<void>;
  /** Closes the server; its data stays, for `start`. */
  stop(): Promise<void>;
  /** Closes the server if it is still open and removes the data directory. */
  close(): Promise<void>;
}

/** A tenant server, not started yet (`start` it, and `close` it when done). */
function tenantServer(options: TestTenantOptions = {}): TestTenant {
  let tmp: ReturnType<typeof makeTempDir> | null = null;
  let current: TenantServer | null = null;
  /** Built and not closed yet (listening, unless listen failed). */
  let open = false;
  let base = '';
  const server = () => {
    if (!current) throw new Error('the tenant server has not started');
    return current;
  };
  const stop = async () => {
    open = false;
    await server().close();
  };
  return {
    get server() {
      return server();
    },
    get base() {
      return base;
    },
    call: httpClient(() => base),
    wsUrl: (path) => `${base.replace('http', 'ws')}${path}`,
    async start() {
      tmp ??= makeTempDir();
      current = buildTenantServer(
        loadConfig({}, { dataDir: tmp.dir, port: 0, logLevel: 'silent', ...options.config }),
        options.server,
      );
      open = true;
      base = await current.app.listen({ host: '127.0.0.1', port: 0 });
    },
    stop,
    async close() {
      if (open) await stop();
      tmp?.cleanup();
    },
  };
}

/** Starts the server for the first time and creates `options.database`. */
async function firstStart(tenant: TestTenant, options: TestTenantOptions): Promise<void> {
  await tenant.start();
  if (options.database === undefined) return;
  const created = await tenant.call('PUT', '/admin/databases', { Name: options.database });
  if (created.status !== 201)
    throw new Error(`creating ${options.database}: ${created.status} ${created.text}`);
}

/** A tenant server started, with `options.database` created. */
export async function startTenantServer(options: TestTenantOptions = {}): Promise<TestTenant> {
  const tenant = tenantServer(options);
  try {
    await firstStart(tenant, options);
    return tenant;
  } catch (error) {
    await tenant.close();
    throw error;
  }
}

/**
 * A tenant server for the tests of the file or describe block this is called in: started (with
 * `options.database` created) before them, closed after them.
 */
export function sharedTenantServer(options: TestTenantOptions = {}): TestTenant {
  const tenant = tenantServer(options);
  beforeAll(() => firstStart(tenant, options));
  afterAll(() => tenant.close());
  return tenant;
}
