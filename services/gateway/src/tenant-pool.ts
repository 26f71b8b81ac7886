// Keep-alive connections from the gateway to tenant containers' Unix sockets,
// one pool per socket, each connection carrying one exchange (request and
// answer) at a time. Answers are read with tenant-response-parser.ts; what to
// send and where the answer goes is proxy.ts's business.
import net from 'node:net';
import { type ResponseHandlers, TenantResponseParser } from './tenant-response-parser.js';

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
  private readonly socket: net.Socket;
  private readonly parser: TenantResponseParser;
  private exchange: Exchange | null = null;
  private answered = false;
  /** Carried a complete exchange before: a failure before any answer may be the tenant closing it meanwhile. */
  reused = false;
  idleSince = 0;

  constructor(
    socketPath: string,
    private readonly onClose: (connection: TenantConnection) => void,
  ) {
    this.socket = net.connect(socketPath);
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

/** The connections to one tenant socket. */
export class TenantPool {
  private readonly idle: TenantConnection[] = [];
  private readonly waiting: Array<(connection: TenantConnection) => void> = [];
  private open = 0;
  private closed = false;
  private sweeper: NodeJS.Timeout | null = null;

  private readonly maxSockets: number;
  private readonly idleCloseMs: number;

  constructor(
    readonly socketPath: string,
    options: TenantPoolOptions = {},
  ) {
    this.maxSockets = options.maxSockets ?? TENANT_POOL_MAX_SOCKETS;
    this.idleCloseMs = options.idleCloseMs ?? IDLE_CLOSE_MS;
  }

  /** Hands `use` a connection: the most recently idle one (unless `fresh`), a new one, or the next one freed. */
  acquire(use: (connection: TenantConnection) => void, fresh = false): void {
    const idle = fresh ? undefined : this.idle.pop();
    if (idle) use(idle);
    else if (this.open < this.maxSockets) use(this.connect());
    else this.waiting.push(use);
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
      next(connection);
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
    for (const use of this.waiting.splice(0)) use(this.connect());
  }

  get connections(): number {
    return this.open;
  }

  private connect(): TenantConnection {
    this.open++;
    return new TenantConnection(this.socketPath, (connection) => this.dropped(connection));
  }

  private dropped(connection: TenantConnection): void {
    this.open--;
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
    const next = this.closed ? undefined : this.waiting.shift();
    if (next) next(this.connect());
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

/** One pool per tenant socket. */
export class TenantPools {
  private readonly pools = new Map<string, TenantPool>();

  constructor(private readonly options: TenantPoolOptions = {}) {}

  for(socketPath: string): TenantPool {
    let pool = this.pools.get(socketPath);
    if (!pool) {
      pool = new TenantPool(socketPath, this.options);
      this.pools.set(socketPath, pool);
    }
    return pool;
  }

  /** Drops the connections of a tenant that stopped. */
  forget(socketPath: string): void {
    this.pools.get(socketPath)?.close();
    this.pools.delete(socketPath);
  }

  close(): void {
    for (const pool of this.pools.values()) pool.close();
    this.pools.clear();
  }
}
