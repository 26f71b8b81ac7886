// One OS process running the tenant service, as the supervisor sees it: started with fork (an IPC channel
// for "ready", "spare" and the activity heartbeat), its messages parsed, its exit as a promise. Also the
// pool of spare processes: tenant code already loaded, waiting to be handed a tenant, so a cold start costs
// an IPC message and opening files instead of booting Node and loading every module.
import { type ChildProcess, fork } from 'node:child_process';
import type { Socket } from 'node:net';
import {
  type IndexBuildProgressMessage,
  type IndexBuildRequestMessage,
  IndexBuildRequestMessageSchema,
  type LeaseMessage,
  type LeaseReading,
  type RelayHandOffMessage,
  type RelayTenantTls,
} from '@rookery/protocol';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { TenantCommand } from './tenant-command.js';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Fleet mode: what a tenant is started with (docs/scale-out.md, "Host leases"). */
export interface TenantLease {
  /** The tenant's placement epoch on this host: its mirror generations carry it. */
  placementEpoch: number;
  /** What the host's lease has left, in whole ms: past it the tenant acknowledges no write. */
  leaseRemainingMs: number;
  /** When that was measured, on the machine's monotonic clock (protocol's `monotonicMs`). */
  leaseMeasuredAtMs: number;
}

/** Fleet mode: where a tenant's launch reads its lease from. */
export interface LeaseSource {
  /** The tenant's placement epoch as this host confirmed it; throws when it has none (the start fails). */
  placementEpoch(tenantId: string): number;
  /** What the host's lease has left now, in ms (0 once lapsed). */
  remainingMs(): number;
}

export interface Activity {
  lastRequestAt: number;
  inFlight: number;
}

/** How far a tenant's mirror is behind (its worst open database: engine's DatabaseCatalog.mirrorLag). */
export const MirrorLagSchema = z.object({
  ms: z.number().finite().min(0),
  transactions: z.number().int().min(0),
});
export type MirrorLag = z.infer<typeof MirrorLagSchema>;

/** What a tenant process tells its supervisor (see services/tenant/src/main.ts). */
const FromTenantSchema = z.union([
  z.object({
    ready: z.literal(true),
    address: z.string(),
    /** A spare's indexer, started before the spare was given its tenant (see services/tenant/src/main.ts). */
    indexerPid: z.number().int().positive().optional(),
  }),
  z.object({ spare: z.literal(true) }),
  z.object({
    type: z.literal('activity'),
    lastRequestAt: z.number().finite(),
    inFlight: z.number().int().min(0),
    // Null: no open database is mirrored. Absent: a tenant build from before it was reported.
    mirrorLag: MirrorLagSchema.nullable().optional(),
  }),
  // Its indexer asks for an index built on the worker fleet (index-builds.ts).
  IndexBuildRequestMessageSchema,
]);

/** Where a tenant's stdout and stderr go; `stderr`: both to the host's stderr (a benchmark keeps stdout for its result). */
export type TenantStdio = 'inherit' | 'ignore' | 'stderr';

const STDIO: Record<TenantStdio, ['inherit' | 'ignore' | number, 'inherit' | 'ignore' | number]> = {
  inherit: ['inherit', 'inherit'],
  ignore: ['ignore', 'ignore'],
  stderr: [2, 2],
};

export class TenantProcess {
  readonly exited: Promise<Exit>;
  /** Resolves when the process listens (on its socket); rejects if it exits first. */
  readonly ready: Promise<void>;
  /** Resolves when a spare has loaded the tenant code; rejects if it exits first. */
  readonly spareReady: Promise<void>;
  onActivity: ((activity: Activity) => void) | null = null;
  onIndexBuild: ((request: IndexBuildRequestMessage) => void) | null = null;
  /** Its mirror's lag as of its last activity report (every second); null until then, or when not mirrored. */
  mirrorLag: MirrorLag | null = null;
  /** The indexer a spare started before it had a tenant: forked before the tenant's cgroup, so not in it yet. */
  indexerPid: number | undefined;
  private exit: Exit | null = null;
  /** The serial of the relay certificate this process was given (handOff), if any. */
  private relaySerial: string | null = null;

  constructor(
    readonly child: ChildProcess,
    private readonly log: Logger,
  ) {
    let readyResolve!: () => void;
    let readyReject!: (error: Error) => void;
    let spareResolve!: () => void;
    let spareReject!: (error: Error) => void;
    this.ready = new Promise((resolve, reject) => {
      readyResolve = resolve;
      readyReject = reject;
    });
    this.spareReady = new Promise((resolve, reject) => {
      spareResolve = resolve;
      spareReject = reject;
    });
    // Nobody may be waiting when the process dies; the exit handler reports it.
    this.ready.catch(() => {});
    this.spareReady.catch(() => {});
    this.exited = new Promise((resolve) => {
      const done = (exit: Exit) => {
        if (this.exit) return;
        this.exit = exit;
        const error = new Error(`the tenant process exited (code ${exit.code}, signal ${exit.signal})`);
        readyReject(error);
        spareReject(error);
        resolve(exit);
      };
      child.once('exit', (code, signal) => done({ code, signal }));
      child.once('error', (error) => {
        // fork failed (no such entry, no resources): there will be no 'exit' when there is no pid.
        this.log.error({ err: error }, 'tenant process error');
        if (child.pid === undefined) done({ code: null, signal: null });
      });
    });
    child.on('message', (raw) => {
      const parsed = FromTenantSchema.safeParse(raw);
      if (!parsed.success) {
        this.log.warn(
          { issues: parsed.error.issues.slice(0, 3) },
          'unexpected message from a tenant process',
        );
        return;
      }
      const message = parsed.data;
      if ('ready' in message) {
        this.indexerPid = message.indexerPid;
        readyResolve();
      } else if ('spare' in message) spareResolve();
      else if (message.type === 'index-build') this.onIndexBuild?.(message);
      else {
        this.mirrorLag = message.mirrorLag ?? null;
        this.onActivity?.({ lastRequestAt: message.lastRequestAt, inFlight: message.inFlight });
      }
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return this.exit === null;
  }

  /** Hands a spare its tenant (in a fleet, with its placement epoch and lease); it answers `ready` once it listens. */
  assign(dataDir: string, socketPath: string, lease: TenantLease | null = null): void {
    this.child.send({ type: 'assign', dataDir, socketPath, ...lease }, (error) => {
      if (error) this.log.warn({ err: error }, 'could not hand the spare process its tenant');
    });
  }

  /** Fleet mode: what the host's lease has left (0: lost); past it the tenant acknowledges no write. */
  sendLease(lease: LeaseReading): void {
    if (!this.alive || !this.child.connected) return;
    const message: LeaseMessage = { type: 'lease', ...lease };
    this.child.send(message, (error) => {
      // The tenant lapses at its old deadline on its own: a lost message costs writes, never safety.
      if (error) this.log.warn({ err: error }, 'could not pass the lease on to a tenant process');
    });
  }

  /** Where a worker build of one of its indexes is (index-builds.ts); dropped when the process is gone. */
  sendIndexBuildProgress(message: IndexBuildProgressMessage): void {
    if (!this.alive || !this.child.connected) return;
    this.child.send(message, (error) => {
      // Only the index's stats miss it: the next report (a second later) carries the same and more.
      if (error) this.log.warn({ err: error }, 'could not pass an index build report to a tenant process');
    });
  }

  /**
   * Fleet mode: passes an accepted relay connection to the process (relay-handoff.ts), with what the host
   * read of it and, when this process has not got them yet, the tenant's TLS material. False when the
   * process cannot take it (exited, channel closed): the host keeps the connection then.
   */
  handOff(socket: Socket, hello: Buffer, tls: RelayTenantTls): boolean {
    if (!this.alive || !this.child.connected) return false;
    const message: RelayHandOffMessage = {
      type: 'relay-connection',
      hello: hello.toString('base64'),
      ...(this.relaySerial === tls.serial ? {} : { tls }),
    };
    this.relaySerial = tls.serial;
    // Sent as a socket of no server. Node's bookkeeping for a server's socket sent to a child (made for
    // cluster workers) would have the relay port's close() wait until every tenant process closed what it
    // was handed — a host stopping hung on it in the chaos suite. The host does not own these connections
    // any more: it closes its copy of the descriptor once sent (the tenant's copy stays open), which also
    // takes the connection off the relay server's count.
    (socket as unknown as { server: unknown }).server = null;
    this.child.send(message, socket, { keepOpen: true }, (error) => {
      socket.destroy();
      if (!error) return;
      this.relaySerial = null; // the material may not have arrived either
      this.log.warn({ err: error }, 'could not hand a relay connection to the tenant process');
    });
    return true;
  }

  signal(signal: NodeJS.Signals): void {
    if (this.alive) this.child.kill(signal);
  }

  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`; resolves on exit. */
  async terminate(graceMs: number): Promise<Exit> {
    this.signal('SIGTERM');
    const timer = setTimeout(() => {
      if (!this.alive) return;
      this.log.warn({ pid: this.pid, graceMs }, 'tenant process did not stop after SIGTERM; killing it');
      this.signal('SIGKILL');
    }, graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Stops processes in parallel: SIGTERM to all at once (each tenant commits its queued writes and exits),
 * SIGKILL to whatever is left at the deadline. Resolves once every one has exited.
 */
export async function terminateAll(
  processes: readonly TenantProcess[],
  deadlineMs: number,
): Promise<{ stopped: number; killed: number }> {
  for (const p of processes) p.signal('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, deadlineMs);
  });
  await Promise.race([Promise.all(processes.map((p) => p.exited)), deadline]);
  clearTimeout(timer);
  const late = processes.filter((p) => p.alive);
  for (const p of late) p.signal('SIGKILL');
  await Promise.all(processes.map((p) => p.exited));
  return { stopped: processes.length - late.length, killed: late.length };
}

export interface SpawnOptions {
  command: TenantCommand;
  env: NodeJS.ProcessEnv;
  stdio: TenantStdio;
  log: Logger;
}

export function spawnTenantProcess(options: SpawnOptions): TenantProcess {
  const child = fork(options.command.entry, [], {
    execArgv: options.command.execArgv,
    env: { ...options.env, ...options.command.env },
    stdio: ['ignore', ...STDIO[options.stdio], 'ipc'],
  });
  return new TenantProcess(child, options.log);
}

/**
 * Spare processes, kept at `size`. A spare that is taken is replaced once
 * the supervisor calls `refill` (after the start it served, and after a
 * delay, so the replacement does not compete with it for CPU). Spares that
 * keep dying are not replaced in a loop: after 3 deaths in a row the pool
 * waits a minute.
 */
export class SparePool {
  private readonly spares: TenantProcess[] = [];
  private closed = false;
  private deathsInARow = 0;
  private pausedUntil = 0;
  private refillTimer: NodeJS.Timeout | null = null;
  /** Settles when the waiting refill has run (or the pool was drained). */
  private refillDue: { promise: Promise<void>; resolve: () => void } | null = null;

  constructor(
    private readonly size: number,
    private readonly spawn: () => TenantProcess,
    private readonly log: Logger,
  ) {}

  get count(): number {
    return this.spares.length;
  }

  /** Resolves once a waiting refill has run and every spare then in the pool has loaded the tenant code (or died trying). */
  async ready(): Promise<void> {
    if (this.refillDue) {
      this.refillTimer?.ref(); // someone waits for it now: it keeps the process alive meanwhile
      await this.refillDue.promise;
    }
    await Promise.all(this.spares.map((spare) => spare.spareReady.catch(() => undefined)));
  }

  /** A spare (ready or still loading: either way further along than a new process), or null. */
  take(): TenantProcess | null {
    return this.spares.shift() ?? null;
  }

  /** Starts spares until there are `size`, after `delayMs` (and not while the pool is paused). */
  refill(delayMs = 0): void {
    if (this.closed || this.refillTimer) return;
    const wait = Math.max(delayMs, this.pausedUntil - Date.now());
    if (wait > 0) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.refillDue = { promise, resolve };
      this.refillTimer = setTimeout(() => {
        this.refillTimer = null;
        this.refillDue = null;
        this.refill();
        resolve();
      }, wait);
      this.refillTimer.unref();
      return;
    }
    while (this.spares.length < this.size) {
      const spare = this.spawn();
      this.spares.push(spare);
      spare.spareReady.then(
        () => {
          this.deathsInARow = 0;
        },
        () => {},
      );
      void spare.exited.then((exit) => {
        const index = this.spares.indexOf(spare);
        if (index < 0 || this.closed) return; // taken (the supervisor watches it now) or shutting down
        this.spares.splice(index, 1);
        this.deathsInARow++;
        this.log.error({ ...exit, pid: spare.pid }, 'a spare tenant process died before it was used');
        if (this.deathsInARow >= 3) {
          this.pausedUntil = Date.now() + 60_000;
          this.log.error('spare processes keep dying; not starting spares for a minute');
        }
        this.refill();
      });
    }
  }

  /** Stops keeping spares and hands back the ones there are (the caller stops them). */
  drain(): TenantProcess[] {
    this.closed = true;
    if (this.refillTimer) clearTimeout(this.refillTimer);
    this.refillDue?.resolve();
    return this.spares.splice(0);
  }
}
