// Plain HTTP servers for the proxy tests, as the gateway meets them: a stand-in tenant on a Unix socket
// in a temporary directory, and a front server on a loopback port. Everything a test starts here is
// closed (connections included) and removed after that test, last started first.
import { once } from 'node:events';
import type http from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import path from 'node:path';
import { makeTempDir } from '@rookery/testkit';
import { afterEach } from 'vitest';

export interface LocalServers {
  /**
   * Listens on `tenant.sock` in a new temporary directory (named from `prefix`); its socket path. A plain
   * net.Server (a tenant that answers raw bytes) closes its connections by itself.
   */
  tenant(server: http.Server | NetServer, prefix: string): Promise<string>;
  /** Listens on a free loopback port; `127.0.0.1:{port}`. */
  front(server: http.Server): Promise<string>;
  /** Runs `cleanup` after the test, before what was started ahead of it. */
  defer(cleanup: () => Promise<void> | void): void;
}

/** Call at the top of a test file: registers the afterEach that takes everything down. */
export function localServers(): LocalServers {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function listen(server: http.Server | NetServer, where: string | number): Promise<void> {
    server.listen(where);
    await once(server, 'listening');
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          if ('closeAllConnections' in server) server.closeAllConnections();
        }),
    );
  }

  return {
    async tenant(server, prefix) {
      const tmp = makeTempDir(prefix);
      cleanups.push(tmp.cleanup);
      const socketPath = path.join(tmp.dir, 'tenant.sock');
      await listen(server, socketPath);
      return socketPath;
    },
    async front(server) {
      await listen(server, 0);
      return `127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    defer(cleanup) {
      cleanups.push(cleanup);
    },
  };
}
