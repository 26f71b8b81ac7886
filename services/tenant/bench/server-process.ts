// A server process for the write benchmarks: the tenant (src/main.ts) or the no-op ceiling, started
// from its TypeScript sources; it reports its address over IPC once it listens.
import { spawnTs, waitForExit } from '@rookery/testkit';

export interface BenchServer {
  /** http://127.0.0.1:<port> */
  url: string;
  /** The server's process id (its indexer is its child). */
  pid: number;
  stop(): Promise<void>;
}

export async function startServer(entry: string, env: NodeJS.ProcessEnv = {}): Promise<BenchServer> {
  const child = spawnTs(entry, [], env);
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m: { address: string }) => resolve(m.address));
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code}`)));
  });
  return {
    url,
    pid: child.pid ?? 0,
    stop: async () => {
      child.kill('SIGTERM');
      await waitForExit(child);
    },
  };
}
