// A real host for job tests: the supervisor and its internal API on a free port, starting real
// tenant processes (from TypeScript sources here, so slower than built ones), never stopping them
// for idleness: tests decide when tenants stop.
import { buildHostServer, loadHostConfig, TenantSupervisor } from '@rookery/host';
import pino from 'pino';

export const HOST_TOKEN = 'test-internal-token-0123456789';

export interface TestHost {
  supervisor: TenantSupervisor;
  /** The internal API's http://host:port. */
  url: string;
  close(): Promise<void>;
}

/** `env`: what the tenant processes see (e.g. ROOKERY_MIRROR); default this process's environment. */
export async function startTestHost(dataDir: string, env?: NodeJS.ProcessEnv): Promise<TestHost> {
  const logger = pino({ level: 'silent' });
  const config = loadHostConfig(
    {},
    {
      dataDir,
      internalToken: HOST_TOKEN,
      port: 0,
      idleStopMs: 0,
      startDeadlineMs: 30_000,
      spareProcesses: 0,
      tenantLogLevel: 'silent',
      tenantMemoryMb: 0,
      tenantCpus: 0,
    },
  );
  const supervisor = new TenantSupervisor(config, { logger, stdio: 'ignore', ...(env ? { env } : {}) });
  const server = buildHostServer({ supervisor, internalToken: HOST_TOKEN, logger });
  const url = await server.listen({ host: '127.0.0.1', port: 0 });
  return {
    supervisor,
    url,
    async close() {
      await supervisor.shutdown();
      await server.close();
    },
  };
}
