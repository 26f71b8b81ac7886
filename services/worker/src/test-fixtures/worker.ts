// The whole worker as main.ts starts it (its configuration wires every handler), pointed at a test
// host: what the end-to-end job tests run.
import pino from 'pino';
import { loadWorkerConfig } from '../config.js';
import { type RunningWorker, startWorker } from '../worker.js';

export function startWorkerForHost(
  dataDir: string,
  host: { url: string; token: string },
  overrides: Parameters<typeof loadWorkerConfig>[1] = {},
): Promise<RunningWorker> {
  const config = loadWorkerConfig(
    {},
    {
      dataDir,
      port: 0,
      pollMs: 50,
      backupEveryMinutes: 0,
      sweepEveryMinutes: 0,
      hostUrl: host.url,
      internalToken: host.token,
      ...overrides,
    },
  );
  return startWorker({ config, masterKey: Buffer.alloc(32, 7), logger: pino({ level: 'silent' }) });
}
