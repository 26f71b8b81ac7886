// The relay port's front (docs/scale-out.md, "The hand-off"): before any TLS ends, it reads the
// connection's ClientHello (client-hello.ts). When the gateway named a tenant there (its relay server
// name, and its believed epoch as an ALPN protocol: packages/protocol/src/relay.ts) and this host owns
// that tenant and runs it, the accepted TCP socket goes to the tenant's process, which ends TLS itself
// and serves HTTP on it: the host is out of the data path (measured: services/gateway/bench/
// relay-designs.ts). Everything else — no name, a tenant not owned here or not running, an epoch newer
// than the one this host confirmed, a drain moving the tenant — goes to the host's own TLS server as
// before, whose upgrade answers 421 / 503 or wakes the tenant and pipes (relay-server.ts). So no byte of
// an unowned tenant's connection reaches a tenant, and nothing reached before the peer proved who it is
// wakes a tenant: only a running one takes connections.
import type net from 'node:net';
import type tls from 'node:tls';
import { epochOfRelayAlpn, type RelayTenantTls, tenantOfRelayServerName } from '@rookery/protocol';
import { readClientHello } from './client-hello.js';
import type { TenantOwnership } from './ownership.js';
import type { TenantSupervisor } from './supervisor.js';
import type { TenantMoves } from './tenant-moves.js';

export interface HandOffOptions {
  ownership: Pick<TenantOwnership, 'confirm'>;
  supervisor: Pick<TenantSupervisor, 'info' | 'handOff'>;
  moves?: Pick<TenantMoves, 'isMoving'> | undefined;
  certificates: { for(tenantId: string): Promise<RelayTenantTls> };
  /** The ClientHello must arrive within this long (a peer that sends nothing holds no socket). */
  helloTimeoutMs: number;
}

/**
 * Puts the front before `server`'s TLS: its own 'connection' listeners (Node's TLS server's, and any
 * other) run only for the connections that stay with the host, with the bytes already read put back.
 */
export function frontRelayConnections(server: tls.Server, options: HandOffOptions): void {
  const own = server.listeners('connection') as ((socket: net.Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: net.Socket) => {
    let bytes = Buffer.alloc(0);
    const dropped = () => socket.destroy();
    socket.on('error', dropped);
    socket.setTimeout(options.helloTimeoutMs, dropped);
    const toHost = () => {
      socket.off('error', dropped);
      socket.setTimeout(0);
      if (socket.destroyed) return;
      if (bytes.length > 0) socket.unshift(bytes);
      for (const listener of own) listener.call(server, socket);
    };
    const onData = (chunk: Buffer) => {
      bytes = Buffer.concat([bytes, chunk]);
      const hello = readClientHello(bytes);
      if (hello === 'incomplete') return; // at most one record (16 KiB): readClientHello says
      socket.off('data', onData);
      socket.pause();
      const tenantId = hello && tenantOfRelayServerName(hello.serverName);
      if (!tenantId) return toHost();
      handOff(options, tenantId, epochOfRelayAlpn(hello?.alpn ?? []), socket, bytes).then((handed) => {
        if (!handed) toHost();
      }, toHost);
    };
    socket.on('data', onData);
  });
}

/** Hands the socket to the tenant's process when every condition holds; false leaves it with the host. */
async function handOff(
  options: HandOffOptions,
  tenantId: string,
  believedEpoch: number | null,
  socket: net.Socket,
  hello: Buffer,
): Promise<boolean> {
  const { supervisor, ownership, moves, certificates } = options;
  if (moves?.isMoving(tenantId) || supervisor.info(tenantId).state !== 'running') return false;
  // Refused (not ours, no lease): the host's TLS answers with the refusal, like any relay request.
  const epoch = await ownership.confirm(tenantId).catch(() => null);
  if (epoch === null || (believedEpoch !== null && believedEpoch > epoch)) return false;
  const tls = await certificates.for(tenantId);
  if (socket.destroyed) return true; // gone while the certificate was issued: nothing left to serve
  // The host's listeners stay behind (a handle sent to another process is closed here once sent).
  socket.removeAllListeners('error');
  socket.removeAllListeners('timeout');
  socket.setTimeout(0);
  socket.on('error', () => socket.destroy());
  return supervisor.handOff(tenantId, socket, hello, tls);
}
