// Another gateway in front of a stack's host and control store, as a second gateway behind a load balancer:
// in this process (so a test can move its clock and call its heartbeat and flush) but with everything a
// gateway keeps of its own — its HTTPS server and port, its connection pool to the store (opened from
// `databaseUrl`, which may go through a proxy the test controls), its rate buckets, live counts, usage
// meter and principal cache. Clients reach it with their own certificates (`Client.agent`).
import { type ControlStore, openPostgresControlStore } from '@rookery/control-store';
import { issueServerCertificate } from '@rookery/pki';
import pino from 'pino';
import { type Gateway, type GatewayOptions, startGateway } from '../gateway.js';
import { HostClient } from '../host-client.js';
import { callWith } from './gateway-clients.js';
import { type Connection, type Reply, type Stack, TOKEN } from './stack.js';

export interface SecondGateway {
  gateway: Gateway;
  /** Its own store connections (closed with it). */
  store: ControlStore;
  /** Its clock: null follows the real time. */
  clock: { now: number | null };
  /** Calls this gateway with a client's certificate. */
  call(who: Pick<Connection, 'agent'>, method: string, path: string, body?: unknown): Promise<Reply>;
  close(): Promise<void>;
}

export async function startSecondGateway(
  stack: Pick<Stack, 'ca' | 'masterKey' | 'hostUrl' | 'jobs'>,
  databaseUrl: string,
  options: Pick<GatewayOptions, 'fleet' | 'liveLimits'> = {},
): Promise<SecondGateway> {
  const store = await openPostgresControlStore(databaseUrl, { onIdleError: () => undefined });
  const server = await issueServerCertificate(stack.ca, { hosts: ['localhost', '127.0.0.1'], validDays: 30 });
  const clock = { now: null as number | null };
  const gateway = await startGateway({
    host: '127.0.0.1',
    port: 0,
    ca: stack.ca,
    serverCertificate: server,
    store,
    hosts: new HostClient(stack.hostUrl, TOKEN),
    masterKey: stack.masterKey,
    jobs: stack.jobs,
    logger: pino({ level: 'silent' }),
    usageFlushMs: 600_000, // flushed by the test
    storageCheckMs: 0,
    tenantCacheMs: 0,
    ...options,
    now: () => clock.now ?? Date.now(),
  });
  return {
    gateway,
    store,
    clock,
    call: (who, method, path, body) => callWith(who.agent, gateway.url + path, method, body),
    async close() {
      await gateway.close();
      await store.close();
    },
  };
}
