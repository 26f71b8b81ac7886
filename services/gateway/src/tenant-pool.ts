// Keep-alive connections from the gateway to a tenant, one pool per way to it
// (one machine: the tenant's Unix socket; a fleet: a host's relay, by host,
// tenant and placement epoch), each connection carrying one exchange (request
// and answer) at a time. A pool opens its connections with the `Connect` it was
// made with; a relay connection is already past its handshake when the pool
// gets it, so everything here sees a plain byte stream to the tenant. Answers
// are read with tenant-response-parser.ts; what to send and where the answer
// goes is proxy.ts's business.
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { type ResponseHandlers, TenantResponseParser } from './tenant-response-parser.js';

/**
 * Opens one connection to the tenant: synchronously (a Unix socket, whose failures arrive as its errors),
 * or once a handshake is done (a relay), rejecting when none could be made — then nothing was sent.
 */
export type Connect = () => Duplex | Promise<Duplex>;

/** The way to a tenant's Unix socket on this machine. */
export const unixSocket =
  (socketPath: string): Connect =>
  () =>
    net.connect(socketPath);

/** A caller waiting for a connection: given one, or told why none could be opened. */
interface Waiter {
  use(connection: TenantConnection): void;
  fail(error: Error): void;
}

/**
 * Most connections the gateway opens to one tenant for requests; one more waits for one of them. A streamed
 * answer holds its connection while it lasts, hence the stream limit below this (live-limits.ts).
 */
export const TENANT_POOL_MAX_SOCKETS = 256;
/** An idle connection is closed after this long, before the tenant's own keep-alive timeout (72 s) would. */
export const IDLE_CLOSE_MS = 30_000;

export interface TenantPoolOptions {
  maxSockets?: number;
  idleCloseMs?: number;
}

/** One exchange's side: the answer's parts as they arrive, or why there will be no (more) answer. */
export interface Exchange extends ResponseHandlers {
  /** The connection failed or closed before the answer was complete; `answered` once its head arrived. */
  failed(error: Error, answered: boolean): void;
}

export class TenantConnection {
  private readonly parser: TenantResponseParser;
  private exchange: Exchange | null = null;
  private answered = false;
  /** Carried a complete exchange before: a failure before any answer may be the tenant closing it meanwhile. */
  reused = false;
  idleSince = 0;

  constructor(
    private readonly socket: Duplex,
    private readonly onClose: (connection: TenantConnection) => void,
  ) {
    this.parser = new TenantResponseParser({
      head: (status, rawHeaders) => {
        this.answered = true;
        this.exchange?.head(status, rawHeaders);
      },
      body: (bytes) => this.exchange?.body(bytes),
      trailers: (rawTrailers) => this.exchange?.trailers(rawTrailers),
      complete: (reusable) => {
        const exchange = this.exchange;
        this.exchange = null;
        exchange?.complete(reusable);
      },
    });
    this.socket.on('data', (data: Buffer) => this.guard(() => this.parser.push(data)));
    this.socket.on('end', () => {
      this.guard(() => this.parser.end());
      this.socket.destroy();
    });
    this.socket.on('error', (error) => this.fail(error));
    this.socket.on('close', () => {
      this.fail(new Error('the connection to the tenant closed'));
      this.onClose(this);
    });
  }

  /** Starts an exchange: the request's head now, its body (if any) through `write`. */
  send(method: string, head: string, exchange: Exchange): void {
    this.exchange = exchange;
    this.answered = false;
    this.parser.expect(method);
    // The last exchange may have ended with reading paused for a slow client.
    this.socket.resume();
    this.socket.write(head, 'latin1');
  }

  /** Writes request body bytes; false when the socket is full (wait for `onDrain`). */
  write(bytes: Buffer | string): boolean {
    return this.socket.write(bytes);
  }

  /** Writes request body bytes as one chunk of chunked coding, in one write of the socket. */
  writeChunk(bytes: Buffer): boolean {
    this.socket.cork();
    this.socket.write(`${bytes.length.toString(16)}\r\n`, 'latin1');
    this.socket.write(bytes);
    const more = this.socket.write('\r\n', 'latin1');
    this.socket.uncork();
    return more;
  }

  onDrain(resume: () => void): () => void {
    this.socket.on('drain', resume);
    return () => this.socket.off('drain', resume);
  }

  /** Stops (or resumes) reading the answer: the client reads slower than the tenant writes. */
  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  destroy(): void {
    this.socket.destroy();
  }

  get busy(): boolean {
    return this.exchange !== null;
  }

  private guard(step: () => void): void {
    try {
      step();
    } catch (error) {
      this.fail(error as Error);
    }
  }

  private fail(error: Error): void {
    const exchange = this.exchange;
    this.exchange = null;
    if (exchange) exchange.failed(error, this.answered);
    this.socket.destroy();
  }
}

/** The connections to one tenant by one way. */
export class TenantPool {
  private readonly idle: TenantConnection[] = [];
  private readonly waiting: Waiter[] = [];
  private open = 0;
  private closed = false;
  private sweeper: NodeJS.Timeout | null = null;

  private readonly maxSockets: number;
  private readonly idleCloseMs: number;

  constructor(
    /** What the pool is known by in its TenantPools: a socket path, or a relay's host, tenant and epoch. */
    readonly key: string,
    private readonly connectTo: Connect,
    options: TenantPoolOptions = {},
  ) {
    this.maxSockets = options.maxSockets ?? TENANT_POOL_MAX_SOCKETS;
    this.idleCloseMs = options.idleCloseMs ?? IDLE_CLOSE_MS;
  }

  /**
   * Hands `use` a connection: the most recently idle one (unless `fresh`), a new one, or the next one
   * freed; or calls `fail` when a new one could not be opened (nothing was sent on it).
   */
  acquire(use: (connection: TenantConnection) => void, fail: (error: Error) => void, fresh = false): void {
    const idle = fresh ? undefined : this.idle.pop();
    if (idle) use(idle);
    else if (this.open < this.maxSockets) this.connect({ use, fail });
    else this.waiting.push({ use, fail });
  }

  /** An exchange is over: the connection carries the next one, or goes when it cannot be trusted to. */
  release(connection: TenantConnection, reusable: boolean): void {
    if (!reusable || this.closed || connection.busy) {
      connection.destroy(); // its 'close' frees the slot (dropped)
      return;
    }
    connection.reused = true;
    const next = this.waiting.shift();
    if (next) {
      next.use(connection);
      return;
    }
    connection.idleSince = Date.now();
    this.idle.push(connection);
    this.sweeper ??= setInterval(() => this.sweep(), this.idleCloseMs / 2).unref();
  }

  /**
   * The tenant stopped: idle connections close now, busy ones when their exchange ends, and callers still
   * waiting get a new connection each, which reaches whatever listens on the socket now or fails.
   */
  close(): void {
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    for (const connection of this.idle.splice(0)) connection.destroy();
    for (const waiter of this.waiting.splice(0)) this.connect(waiter);
  }

  get connections(): number {
    return this.open;
  }

  /** Opens a connection for `waiter`, holding its slot while a handshake is under way. */
  private connect(waiter: Waiter): void {
    this.open++;
    let made: Duplex | Promise<Duplex>;
    try {
      made = this.connectTo();
    } catch (error) {
      this.failed(waiter, error as Error);
      return;
    }
    // The Unix socket's way stays synchronous: no promise tick on the path of a new local connection.
    if (!(made instanceof Promise)) {
      waiter.use(this.wrap(made));
      return;
    }
    made.then(
      (socket) => waiter.use(this.wrap(socket)),
      (error: Error) => this.failed(waiter, error),
    );
  }

  private wrap(socket: Duplex): TenantConnection {
    return new TenantConnection(socket, (connection) => this.dropped(connection));
  }

  /** No connection was made: the slot is free again, and the next waiter tries for itself. */
  private failed(waiter: Waiter, error: Error): void {
    this.open--;
    waiter.fail(error);
    const next = this.closed ? undefined : this.waiting.shift();
    if (next) this.connect(next);
  }

  private dropped(connection: TenantConnection): void {
    this.open--;
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
    const next = this.closed ? undefined : this.waiting.shift();
    if (next) this.connect(next);
  }

  private sweep(): void {
    const oldest = Date.now() - this.idleCloseMs;
    // Idle connections are pushed in the order they went idle: the stale ones are at the front.
    while (this.idle.length > 0 && this.idle[0]!.idleSince <= oldest) this.idle.shift()!.destroy();
    if (this.idle.length === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }
}

/** One pool per way to a tenant. */
export class TenantPools {
  private readonly pools = new Map<string, TenantPool>();

  constructor(private readonly options: TenantPoolOptions = {}) {}

  /** The pool known by `key`, made with `connect` (by default: `key` is a Unix socket's path) if new. */
  for(key: string, connect: Connect = unixSocket(key)): TenantPool {
    let pool = this.pools.get(key);
    if (!pool) {
      pool = new TenantPool(key, connect, this.options);
      this.pools.set(key, pool);
    }
    return pool;
  }

  /** Drops the connections of a tenant that stopped, or of a placement that is no longer the tenant's. */
  forget(key: string): void {
    this.pools.get(key)?.close();
    this.pools.delete(key);
  }

  close(): void {
    for (const pool of this.pools.values()) pool.close();
    this.pools.clear();
  }
}
