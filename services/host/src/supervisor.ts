// The host's core: one process per tenant, started on first demand and stopped when idle. Each tenant has
// its own start promise (its lock, tenant-record.ts), so concurrent wakes of one tenant share a single start
// and a slow tenant never holds up another. Crashes restart with backoff, capped per minute
// (restart-policy.ts); shutdown stops every tenant in parallel within a deadline; stats are read from the
// files, never by starting a tenant (tenant-stats.ts). This file orchestrates; the rules live beside it.
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import type { Socket } from 'node:net';
import {
  type HostPurgeAnswer,
  type HostTenantInfo,
  type HostTenantState,
  type HostTenantStats,
  type HostWakeAnswer,
  type LeaseReading,
  type RelayTenantTls,
  RookeryError,
  TENANT_ID_PATTERN,
  TENANT_ID_RULE,
} from '@rookery/protocol';
import type { Logger } from 'pino';
import { CgroupLimiter } from './cgroups.js';
import type { FleetConfigKey, HostConfig } from './config.js';
import { withinDeadline } from './deadline.js';
import { idleCheckEveryMs, idleTenants } from './idle-stop.js';
import type { IndexBuildQueue } from './index-builds.js';
import { HostMetrics } from './metrics.js';
import { nextRestart, withFailure } from './restart-policy.js';
import { commandFor, defaultTenantCommand, type TenantCommand } from './tenant-command.js';
import { tenantEnvironment } from './tenant-env.js';
import { launchTenant } from './tenant-launch.js';
import { TenantPaths } from './tenant-paths.js';
import {
  type Exit,
  type LeaseSource,
  type MirrorLag,
  SparePool,
  spawnTenantProcess,
  type TenantProcess,
  type TenantStdio,
  terminateAll,
} from './tenant-process.js';
import { infoOf, newTenantRecord, stoppedInfo, type TenantRecord } from './tenant-record.js';
import { readTenantStats } from './tenant-stats.js';

// What the supervisor answers is what the host's API answers: the wire types of @rookery/protocol (host.ts).
export type PurgeResult = HostPurgeAnswer;
export type TenantState = HostTenantState;
export type WakeResult = HostWakeAnswer;
export type TenantInfo = HostTenantInfo;
export type TenantStats = HostTenantStats;

export type SupervisorConfig = Omit<
  HostConfig,
  'host' | 'port' | 'internalToken' | 'logLevel' | FleetConfigKey
>;

export interface SupervisorOptions {
  logger: Logger;
  /** The command of each tenant process (`null`: a spare). Default: `tenantEntry`, else the built tenant. */
  command?: (tenantId: string | null) => TenantCommand;
  /** Where tenant processes write their logs (default: the host's stdout/stderr). */
  stdio?: TenantStdio;
  /** Environment the tenant processes start from (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /**
   * Fleet mode (fleet-mode.ts): each tenant's placement epoch and what the host's lease has left, handed
   * to it at every start (and the lease again by broadcastLease). Unset on one machine: no lease.
   */
  lease?: LeaseSource;
  /**
   * Worker-built indexes (index-builds.ts): tenants are started with its threshold and their build requests
   * go on its queue. Unset (one machine without a worker fleet): every index is built beside its tenant.
   */
  indexBuilds?: IndexBuildQueue;
}

export interface SupervisorEvents {
  started: [tenantId: string, info: { pid: number; startMs: number; fromSpare: boolean }];
  exited: [tenantId: string, info: Exit & { pid: number | undefined; expected: boolean }];
  idle: [tenantId: string];
}

export class TenantSupervisor extends EventEmitter<SupervisorEvents> {
  readonly metrics: HostMetrics;
  private readonly tenants = new Map<string, TenantRecord>();
  private readonly log: Logger;
  private readonly limiter: CgroupLimiter;
  private readonly spares: SparePool;
  private readonly command: (tenantId: string | null) => TenantCommand;
  private readonly idleTimer: NodeJS.Timeout | null;
  private readonly paths: TenantPaths;
  /** Purges under way, by tenant id: a second purge of the same tenant waits for the first. */
  private readonly purges = new Map<string, Promise<PurgeResult>>();
  private closing = false;

  constructor(
    private readonly config: SupervisorConfig,
    private readonly options: SupervisorOptions,
  ) {
    super();
    this.log = options.logger;
    this.paths = new TenantPaths(config.dataDir);
    this.metrics = new HostMetrics(
      () => this.countRunning(),
      () => this.runningMirrorLags(),
    );
    this.limiter = new CgroupLimiter(
      config.cgroupRoot,
      { memoryBytes: config.tenantMemoryMb * 1024 * 1024, cpus: config.tenantCpus },
      this.log,
    );
    if (options.command) this.command = options.command;
    else {
      const command =
        config.tenantEntry !== undefined ? commandFor(config.tenantEntry) : defaultTenantCommand();
      this.log.info({ tenantCommand: command.description }, 'tenant processes run this entry point');
      this.command = () => command;
    }
    this.spares = new SparePool(
      config.spareProcesses,
      () => this.spawn(null, { ROOKERY_SPARE: '1' }),
      this.log.child({ spare: true }),
    );
    this.spares.refill();
    if (config.idleStopMs > 0) {
      this.idleTimer = setInterval(() => this.stopIdleTenants(), idleCheckEveryMs(config.idleStopMs));
      this.idleTimer.unref();
    } else this.idleTimer = null;
  }

  /**
   * The socket of the tenant's running process, starting it if needed.
   * Waits at most `startDeadlineMs` for a start, then rejects with
   * `TenantStarting` (retry after a second) while the start goes on.
   */
  async wake(tenantId: string): Promise<WakeResult> {
    const t = this.tenant(tenantId);
    for (;;) {
      if (this.closing) {
        throw new RookeryError('TenantUnavailable', 'The host is shutting down; retry in a moment', {
          retryAfterSeconds: 1,
        });
      }
      if (this.purges.has(t.id)) {
        // Starting it now would run the tenant over files being deleted (or recreate them after).
        throw new RookeryError('TenantUnavailable', `Tenant ${t.id} is being deleted from this host`, {
          retryAfterSeconds: 1,
        });
      }
      t.lastActivityAt = Date.now(); // a wake comes just before a request: not idle
      if (t.state === 'running' && this.disowned(t)) {
        // Running under an epoch the store has moved past (it was placed elsewhere and came back): its
        // files and its mirror lineage are stale. Stopped here; the next start serves the new epoch.
        await this.stopDisownedOne(t, 'a wake confirmed a newer placement epoch');
        continue;
      }
      if (t.state === 'running') return { socketPath: t.socketPath, startedNow: false, startMs: 0 };
      if (t.state === 'stopping') {
        await t.stopping;
        continue;
      }
      if (t.state === 'stopped') {
        const wait = t.suspendedUntil - Date.now();
        if (wait > 0) {
          throw new RookeryError(
            'TenantUnavailable',
            `Tenant ${t.id} crashed ${t.failures.length} times within a minute; it is not started again for ${Math.ceil(wait / 1000)} s (see the host's log)`,
            { retryAfterSeconds: Math.ceil(wait / 1000) },
          );
        }
        this.beginStart(t, 0, 'wake');
      }
      const startMs = await withinDeadline(
        t.starting!,
        this.config.startDeadlineMs,
        () =>
          new RookeryError(
            'TenantStarting',
            `Tenant ${t.id} is starting and was not ready within ${this.config.startDeadlineMs} ms; retry in a second`,
            { retryAfterSeconds: 1 },
          ),
      );
      return { socketPath: t.socketPath, startedNow: true, startMs: Math.round(startMs) };
    }
  }

  /** Fleet mode: tells every tenant process what the host's lease has left now (0: it lapsed). */
  broadcastLease(lease: LeaseReading): void {
    for (const t of this.tenants.values()) t.process?.sendLease(lease);
  }

  /**
   * Fleet mode, after this host acquired a new lease (a new epoch; docs/scale-out.md, "Failover"): every
   * tenant process whose placement the store no longer gives this host is stopped, so its clients go to
   * the new owner. `owns` answers, for a tenant and the epoch its process serves under, the placement
   * epoch it may go on serving under, or null. A stop is a normal one: the tenant answers nothing more,
   * and its mirror shipper writes nothing once a newer owner's generation exists (the epoch fence).
   * Answers the tenants stopped.
   */
  async stopDisowned(
    owns: (tenantId: string, servingEpoch: number | null) => number | null,
  ): Promise<string[]> {
    const stops: Promise<void>[] = [];
    const stopped: string[] = [];
    for (const t of this.tenants.values()) {
      if (t.state !== 'running' && t.state !== 'starting') continue;
      const epoch = owns(t.id, t.servingEpoch);
      if (epoch !== null) {
        t.servingEpoch = epoch;
        continue;
      }
      stopped.push(t.id);
      stops.push(this.stopDisownedOne(t, 'the store placed it elsewhere while this host held no lease'));
    }
    await Promise.all(stops);
    return stopped;
  }

  /** Running under another epoch than the one the host just confirmed for it (fleet mode only). */
  private disowned(t: TenantRecord): boolean {
    return this.options.lease !== undefined && t.servingEpoch !== this.options.lease.placementEpoch(t.id);
  }

  private async stopDisownedOne(t: TenantRecord, why: string): Promise<void> {
    this.metrics.disownedStops.inc();
    t.log.warn({ servingEpoch: t.servingEpoch }, `stopping a tenant this host no longer owns: ${why}`);
    await this.stop(t.id);
  }

  /** Stops the tenant's process (SIGTERM, then SIGKILL after `stopTimeoutMs`). False if it was not running. */
  async stop(tenantId: string): Promise<boolean> {
    const t = this.tenants.get(this.checkId(tenantId));
    if (!t) return false;
    switch (t.state) {
      case 'stopped':
        return false;
      case 'stopping':
        await t.stopping;
        return true;
      case 'starting': {
        t.stopRequested = true;
        t.cancelRestart?.();
        const starting = t.starting;
        void t.process?.terminate(this.config.stopTimeoutMs);
        await starting?.catch(() => {});
        return true;
      }
      case 'running': {
        const proc = t.process!;
        t.stopRequested = true;
        t.state = 'stopping';
        t.stopping = proc.terminate(this.config.stopTimeoutMs).then(() => {
          t.stopping = null;
        });
        await t.stopping;
        return true;
      }
    }
  }

  /**
   * Removes a deleted tenant from this host: stops its process (a spare it was given is that
   * process) and deletes `<data>/tenants/<id>/` and its socket. Idempotent: purging a tenant this
   * host never ran, or purging twice, succeeds with `removedFiles: false`. Wakes are refused while
   * it runs, so a request racing the deletion cannot start the tenant over half-deleted files.
   */
  purge(tenantId: string): Promise<PurgeResult> {
    const id = this.checkId(tenantId);
    let purge = this.purges.get(id);
    if (!purge) {
      purge = this.purgeNow(id).finally(() => this.purges.delete(id));
      this.purges.set(id, purge);
    }
    return purge;
  }

  private async purgeNow(id: string): Promise<PurgeResult> {
    let wasRunning = false;
    // A stop ends a start in progress too; loop in case one began before the purge was recorded.
    while ((this.tenants.get(id)?.state ?? 'stopped') !== 'stopped')
      wasRunning = (await this.stop(id)) || wasRunning;
    const dir = this.paths.dirOf(id);
    const removedFiles = fs.existsSync(dir);
    await fs.promises.rm(dir, { recursive: true, force: true });
    // Outside the directory when the data directory is too deep for a socket path.
    await fs.promises.rm(this.paths.socketPathOf(id), { force: true });
    // Counters and crash history belong to the deleted tenant, not to a later one with its id.
    this.tenants.delete(id);
    this.log.info({ tenant: id, wasRunning, removedFiles }, 'tenant purged from this host');
    return { tenantId: id, wasRunning, removedFiles };
  }

  /**
   * Stops every tenant in parallel: SIGTERM to all at once (each commits its
   * queued writes and exits), SIGKILL to whatever is left at the deadline.
   */
  async shutdown(deadlineMs = this.config.shutdownDeadlineMs): Promise<{ stopped: number; killed: number }> {
    this.closing = true;
    if (this.idleTimer) clearInterval(this.idleTimer);
    const processes = this.spares.drain();
    for (const t of this.tenants.values()) {
      t.stopRequested = true;
      t.cancelRestart?.();
      if (t.process) processes.push(t.process);
    }
    this.log.info({ processes: processes.length, deadlineMs }, 'stopping every tenant');
    const outcome = await terminateAll(processes, deadlineMs);
    if (outcome.killed > 0)
      this.log.warn({ killed: outcome.killed }, 'tenants still running at the deadline were killed');
    return outcome;
  }

  /**
   * Resolves once the spare processes there are have loaded the tenant code. A
   * benchmark waits for this between cold starts, so it measures the start a
   * sleeping tenant gets on a host that is not starting tenants back to back.
   */
  sparesReady(): Promise<void> {
    return this.spares.ready();
  }

  /** The tenant's databases and bytes on disk, read from its files: never starts it. */
  async stats(tenantId: string): Promise<TenantStats> {
    const id = this.checkId(tenantId);
    const stored = await readTenantStats(this.paths.dirOf(id));
    return { tenantId: id, state: this.tenants.get(id)?.state ?? 'stopped', ...stored };
  }

  info(tenantId: string): TenantInfo {
    const id = this.checkId(tenantId);
    const t = this.tenants.get(id);
    return t ? infoOf(t, Date.now()) : stoppedInfo(id, this.paths.socketPathOf(id));
  }

  /**
   * Fleet mode: passes a relay connection to the tenant's process if it is running (never wakes it: the
   * peer is not authenticated yet). False when it is not: the caller keeps the connection.
   */
  handOff(tenantId: string, socket: Socket, hello: Buffer, tls: RelayTenantTls): boolean {
    const t = this.tenants.get(tenantId);
    if (t?.state !== 'running' || !t.process) return false;
    return t.process.handOff(socket, hello, tls);
  }

  /** Every tenant with a directory on this host or a record in this process, sorted by id. */
  list(): TenantInfo[] {
    const ids = new Set([...this.tenants.keys(), ...this.paths.storedIds()]);
    return [...ids].sort().map((id) => this.info(id));
  }

  // ---- starting ------------------------------------------------------------

  private beginStart(t: TenantRecord, delayMs: number, reason: 'wake' | 'restart'): void {
    t.state = 'starting';
    t.stopRequested = false;
    const attempt = (async () => {
      if (delayMs > 0) await this.backoff(t, delayMs);
      return this.launch(t);
    })();
    t.starting = attempt;
    attempt.then(
      () => {
        t.starting = null;
      },
      (error: unknown) => {
        t.starting = null;
        if (t.state === 'starting') t.state = 'stopped';
        if (t.stopRequested || this.closing) return;
        this.metrics.startFailures.inc();
        t.failures = withFailure(t.failures, Date.now());
        t.log.error({ err: error, reason }, 'tenant start failed');
        if (reason === 'restart') this.scheduleRestart(t);
      },
    );
  }

  private backoff(t: TenantRecord, delayMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        t.cancelRestart = null;
        resolve();
      }, delayMs);
      t.cancelRestart = () => {
        clearTimeout(timer);
        t.cancelRestart = null;
        reject(new RookeryError('TenantUnavailable', `Tenant ${t.id} was stopped before it restarted`));
      };
    });
  }

  /** Starts the process and resolves with the start's duration once it listens. */
  private async launch(t: TenantRecord): Promise<number> {
    const begun = performance.now();
    const { proc, fromSpare } = await launchTenant(t, {
      spares: this.spares,
      spawn: (id, env) => this.spawn(id, env),
      limiter: this.limiter,
      startTimeoutMs: this.config.startTimeoutMs,
      stopTimeoutMs: this.config.stopTimeoutMs,
      onExit: (proc, exit) => this.onExit(t, proc, exit),
      lease: this.options.lease ?? null,
      onIndexBuild: (request) =>
        void this.options.indexBuilds?.request(t.id, request, (id, message) =>
          this.tenants.get(id)?.process?.sendIndexBuildProgress(message),
        ),
    });
    const startMs = performance.now() - begun;
    t.state = 'running';
    t.readySince = Date.now();
    t.lastActivityAt = Date.now();
    t.inFlight = 0;
    this.metrics.starts.inc({ from: fromSpare ? 'spare' : 'fresh' });
    this.metrics.startDuration.observe(startMs / 1000);
    t.log.info({ pid: proc.pid, startMs: Math.round(startMs), fromSpare }, 'tenant started');
    this.emit('started', t.id, { pid: proc.pid!, startMs, fromSpare });
    return startMs;
  }

  private onExit(t: TenantRecord, proc: TenantProcess, exit: Exit): void {
    if (t.process !== proc) return;
    const wasRunning = t.state === 'running' || t.state === 'stopping';
    t.process = null;
    t.readySince = null;
    t.inFlight = 0;
    if (t.state !== 'starting') t.state = 'stopped'; // a failed start is settled by beginStart
    fs.rmSync(t.socketPath, { force: true });
    const expected = t.stopRequested || this.closing;
    this.emit('exited', t.id, { ...exit, pid: proc.pid, expected });
    if (expected) {
      t.log.info({ ...exit, pid: proc.pid }, 'tenant stopped');
      return;
    }
    if (!wasRunning) return; // exited while starting: the start fails (and beginStart decides what next)
    t.crashes++;
    this.metrics.crashes.inc();
    t.failures = withFailure(t.failures, Date.now());
    t.log.error({ ...exit, pid: proc.pid }, 'tenant process exited without being asked to');
    this.scheduleRestart(t);
  }

  private scheduleRestart(t: TenantRecord): void {
    if (this.closing) return;
    const next = nextRestart(t.failures, this.config);
    if ('suspendedUntil' in next) {
      t.suspendedUntil = next.suspendedUntil;
      t.log.error(
        { failures: t.failures.length, until: new Date(t.suspendedUntil).toISOString() },
        'tenant keeps crashing: automatic restarts and wakes suspended until the minute has passed',
      );
      return;
    }
    t.log.warn({ delayMs: next.delayMs, failures: t.failures.length }, 'restarting the tenant after a crash');
    this.beginStart(t, next.delayMs, 'restart');
  }

  // ---- idle stop -------------------------------------------------------------

  private stopIdleTenants(): void {
    for (const { tenant: t, idleMs } of idleTenants(
      this.tenants.values(),
      Date.now(),
      this.config.idleStopMs,
    )) {
      this.metrics.idleStops.inc();
      t.log.info({ idleMs }, 'tenant idle: stopping it');
      this.emit('idle', t.id);
      this.stop(t.id).catch((error) => t.log.error({ err: error }, 'idle stop failed'));
    }
  }

  // ---- processes and paths -----------------------------------------------------

  private spawn(tenantId: string | null, env: Record<string, string>): TenantProcess {
    const log = tenantId === null ? this.log.child({ spare: true }) : this.log.child({ tenant: tenantId });
    return spawnTenantProcess({
      command: this.command(tenantId),
      env: {
        ...tenantEnvironment(this.options.env ?? process.env, this.config),
        // The indexer reads it at its start (a spare's too): 0 builds every index here.
        ROOKERY_INDEX_WORKER_THRESHOLD: String(this.options.indexBuilds?.threshold ?? 0),
        ...env,
      },
      stdio: this.options.stdio ?? 'inherit',
      log,
    });
  }

  private tenant(tenantId: string): TenantRecord {
    const id = this.checkId(tenantId);
    let t = this.tenants.get(id);
    if (!t) {
      t = newTenantRecord(
        id,
        this.paths.dirOf(id),
        this.paths.socketPathOf(id),
        this.log.child({ tenant: id }),
      );
      this.tenants.set(id, t);
    }
    return t;
  }

  private checkId(tenantId: string): string {
    if (!TENANT_ID_PATTERN.test(tenantId)) {
      throw new RookeryError(
        'InvalidTenantId',
        `"${tenantId.slice(0, 80)}" is not a tenant id: ${TENANT_ID_RULE}`,
      );
    }
    return tenantId;
  }

  private countRunning(): number {
    let n = 0;
    for (const t of this.tenants.values()) if (t.state === 'running') n++;
    return n;
  }

  /** What each running tenant last reported of its mirror's lag (metrics.ts). */
  private *runningMirrorLags(): Iterable<MirrorLag | null> {
    for (const t of this.tenants.values()) if (t.state === 'running') yield t.process?.mirrorLag ?? null;
  }
}
