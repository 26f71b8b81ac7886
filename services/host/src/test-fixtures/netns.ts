// A real network partition for chaos tests: a Linux network namespace joined to this one by a veth pair,
// so that a process started inside it (`wrap`) reaches this side only over the pair, and `cut()` takes the
// pair's outer end down (packets vanish: no reset, no error, as when a cable or a route goes). Needs root and
// iproute2; without them `openNetworkNamespace` fails saying so — a chaos test must not skip silently.
//
// Unix sockets and files are not namespaced: a host inside still reaches its tenants' sockets and the shared
// mirror, and the test still reaches those tenants; only TCP to this side crosses the pair.
import { execFileSync } from 'node:child_process';
import net from 'node:net';

export interface NetworkNamespace {
  name: string;
  /** This side's address on the pair (10.231.x.1). */
  outerAddress: string;
  /** The namespace's address on the pair (10.231.x.2): what a process inside listens on to be reached. */
  innerAddress: string;
  /** The command prefix that runs a program inside (`ip netns exec <name>`, which execs it in place). */
  wrap: readonly [string, ...string[]];
  /** Takes the pair down: nothing crosses in either direction, connections already open hang. */
  cut(): void;
  /** Deletes the namespace (and with it the pair); safe to call twice, and after a failed setup. */
  remove(): void;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();

function explain(step: string, error: unknown): Error {
  const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  return new Error(
    `This chaos test needs a Linux network namespace and a veth pair (iproute2's \`ip\`, run as root)` +
      ` and could not ${step}: ${stderr || (error as Error).message}.` +
      (root ? '' : ' It is not running as root.') +
      ' Run it as root on a Linux machine with iproute2 installed (`apt-get install -y iproute2`).',
  );
}

/** Creates the namespace `rookery-<tag>-<pid>`, a /30 on a veth pair between it and here, both ends up. */
export function openNetworkNamespace(tag: string): NetworkNamespace {
  const name = `rookery-${tag}-${process.pid}`;
  // Interface names are at most 15 bytes; the pid keeps concurrent runs apart.
  const outer = `rk${process.pid % 100_000}o`;
  const inner = `rk${process.pid % 100_000}i`;
  const subnet = `10.231.${process.pid % 250}`;
  const outerAddress = `${subnet}.1`;
  const innerAddress = `${subnet}.2`;
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    process.removeListener('exit', remove);
    // Deleting the namespace deletes the inner end, and a veth pair goes with either end; the outer end
    // is deleted by name too in case the namespace never got it.
    for (const args of [
      ['netns', 'delete', name],
      ['link', 'delete', outer],
    ]) {
      try {
        ip(...args);
      } catch {
        // already gone
      }
    }
  };
  const step = (what: string, ...args: string[]) => {
    try {
      ip(...args);
    } catch (error) {
      remove();
      throw explain(what, error);
    }
  };
  step('create a network namespace (`ip netns add`)', 'netns', 'add', name);
  process.once('exit', remove);
  step('create a veth pair', 'link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
  step('move the veth end into the namespace', 'link', 'set', inner, 'netns', name);
  step('address the outer end', 'addr', 'add', `${outerAddress}/30`, 'dev', outer);
  step('bring the outer end up', 'link', 'set', outer, 'up');
  const inside = (...args: string[]) => ['netns', 'exec', name, 'ip', ...args];
  step('address the inner end', ...inside('addr', 'add', `${innerAddress}/30`, 'dev', inner));
  step('bring the inner end up', ...inside('link', 'set', inner, 'up'));
  step('bring the namespace’s loopback up', ...inside('link', 'set', 'lo', 'up'));
  return {
    name,
    outerAddress,
    innerAddress,
    wrap: ['ip', 'netns', 'exec', name],
    cut: () => step('take the veth pair down', 'link', 'set', outer, 'down'),
    remove,
  };
}

export interface TcpForward {
  port: number;
  close(): Promise<void>;
}

/**
 * Listens on `host` (a port of its own) and pipes every connection to 127.0.0.1:`targetPort`: the test kit's
 * PostgreSQL listens on 127.0.0.1 only, and this makes it reachable on the veth pair's outer address. A
 * connection whose far side went silent stays open, as a connection to the server itself would.
 */
export async function forwardTcp(host: string, targetPort: number): Promise<TcpForward> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((incoming) => {
    const outgoing = net.connect(targetPort, '127.0.0.1');
    for (const socket of [incoming, outgoing]) {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      socket.on('error', () => {
        incoming.destroy();
        outgoing.destroy();
      });
    }
    incoming.pipe(outgoing).pipe(incoming);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('the forward has no port');
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
