// The host's core: one process per tenant, started on first demand and stopped when idle. Each tenant has
// its own start promise (its lock), so concurrent wakes of one tenant share a single start and a slow
// tenant never holds up another. Crashes restart with backoff (capped per minute); shutdown stops every
// tenant in parallel within a deadline; stats are read from the files, never by starting a tenant.
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  type HostPurgeAnswer,
  type HostTenantInfo,
  type HostTenantState,
  type HostTenantStats,
  type HostWakeAnswer,
  RookeryError,
  TENANT_ID_PATTERN,
  TENANT_ID_RULE,
} from '@rookery/protocol';
import type { Logger } from 'pino';
import { CgroupLimiter } from './cgroups.js';
import type { HostConfig } from './config.js';
import { HostMetrics } from './metrics.js';
import { commandFor, defaultTenantCommand, type TenantCommand } from './tenant-command.js';
import {
  type Exit,
  SparePool,
  spawnTenantProcess,
  type TenantProcess,
  type TenantStdio,
} from './tenant-process.js';
import { readTenantStats } from './tenant-stats.js';

// What the supervisor answers is what the host's API answers: the wire types of @rookery/protocol (host.ts).
export type PurgeResult = HostPurgeAnswer;
export type TenantState = HostTenantState;
export type WakeResult = HostWakeAnswer;
export type TenantInfo = HostTenantInfo;
export type TenantStats = HostTenantStats;

export type SupervisorConfig = Omit<HostConfig, 'host' | 'port' | 'internalToken' | 'logLevel'>;

export interface SupervisorOptions {
  logger: Logger;
  /** The command of each tenant process (`null`: a spare). Default: `tenantEntry`, else the built tenant. */
  command?: (tenantId: string | null) => TenantCommand;
  /** Where tenant processes write their logs (default: the host's stdout/stderr). */
  stdio?: TenantStdio;
  /** Environment the tenant processes start from (default: this process's). */
  env?: NodeJS.ProcessEnv;
}

export interface SupervisorEvents {
  started: [tenantId: string, info: { pid: number; startMs: number; fromSpare: boolean }];
  exited: [tenantId: string, info: Exit & { pid: number | undefined; expected: boolean }];
  idle: [tenantId: string];
}

/** Tenant settings a host passes on to its tenants; every other ROOKERY_* variable (the token!) stays here. */
const TENANT_SETTINGS = new Set([
  'ROOKERY_MAX_BODY_BYTES',
  'ROOKERY_MAX_DOCUMENT_BYTES',
  'ROOKERY_SYNCHRONOUS',
  'ROOKERY_COMPRESSION_THRESHOLD_BYTES',
  'ROOKERY_MERGE_TRANSACTIONS',
  // The mirror: one directory for every tenant (each writes under its own id, which the tenant
  // takes from its data directory's name), a default mode, per-database modes and tuning.
  'ROOKERY_MIRROR',
  'ROOKERY_MIRROR_MODE',
  'ROOKERY_MIRROR_DATABASES',
  'ROOKERY_MIRROR_SNAPSHOT_MB',
  'ROOKERY_MIRROR_SNAPSHOT_MINUTES',
  'ROOKERY_MIRROR_RETENTION_HOURS',
  'ROOKERY_MIRROR_MAX_LAG_MS',
  'ROOKERY_MIRROR_CONFIRM_TIMEOUT_MS',
  // What a tenant's index code may cost its indexer (the tenant's config.ts).
  'ROOKERY_INDEX_MAX_PER_DATABASE',
  'ROOKERY_INDEX_SANDBOX_BUDGET_MB',
  'ROOKERY_INDEX_SANDBOX_MEMORY_MB',
  'ROOKERY_INDEX_DOCUMENT_TIMEOUT_MS',
  'ROOKERY_INDEX_BATCH_TIME_MS',
  'ROOKERY_INDEX_MAX_ENTRIES_PER_DOCUMENT',
  // How long a tenant waits for its indexer process to answer a request before failing it with 503.
  'ROOKERY_INDEXER_REQUEST_TIMEOUT_MS',
]);
const FAILURE_WINDOW_MS = 60_000;
/**
 * A used spare is replaced this long after the start it served, not at once: forking the replacement
 * would hold up the wake's answer by a few ms, and booting it takes a core for ~300 ms, which on a small
 * host competes with the woken tenant's first requests. Tenants woken within this window get a fresh
 * process, as when several wake at once (more spares are the answer to bursts: ROOKERY_SPARE_PROCESSES).
 */
const SPARE_REFILL_DELAY_MS = 250;
/** The longest Unix socket path (sun_path is 108 bytes with the terminating NUL). */
const MAX_SOCKET_PATH = 107;

interface Tenant {
  readonly id: string;
  readonly dir: string;
  readonly socketPath: string;
  readonly log: Logger;
  state: TenantState;
  process: TenantProcess | null;
  /** The start in progress (or waiting out a restart backoff): every wake of this tenant awaits this one. */
  starting: Promise<number> | null;
  stopping: Promise<void> | null;
  /** Cancels a restart that is waiting out its backoff. */
  cancelRestart: (() => void) | null;
  stopRequested: boolean;
  lastActivityAt: number | null;
  inFlight: number;
  readySince: number | null;
  starts: number;
  crashes: number;
  /** Times of crashes and failed starts within the last minute. */
  failures: number[];
  suspendedUntil: number;
}

export class TenantSupervisor extends EventEmitter<SupervisorEvents> {
  readonly metrics: HostMetrics;
  private readonly tenants = new Map<string, Tenant>();
  private readonly log: Logger;
  private readonly limiter: CgroupLimiter;
  private readonly spares: SparePool;
  private readonly command: (tenantId: string | null) => TenantCommand;
  private readonly idleTimer: NodeJS.Timeout | null;
  private readonly tenantsRoot: string;
  /** Purges under way, by tenant id: a second purge of the same tenant waits for the first. */
  private readonly purges = new Map<string, Promise<PurgeResult>>();
  private closing = false;

  constructor(
    private readonly config: SupervisorConfig,
    private readonly options: SupervisorOptions,
  ) {
    super();
    this.log = options.logger;
    this.tenantsRoot = path.join(config.dataDir, 'tenants');
    fs.mkdirSync(this.tenantsRoot, { recursive: true });
    this.metrics = new HostMetrics(() => this.countRunning());
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
      const every = Math.min(5_000, Math.max(100, Math.floor(config.idleStopMs / 4)));
      this.idleTimer = setInterval(() => this.stopIdleTenants(), every);
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
      const startMs = await this.withinDeadline(t, t.starting!);
      return { socketPath: t.socketPath, startedNow: true, startMs: Math.round(startMs) };
    }
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
    const dir = this.tenantDir(id);
    const removedFiles = fs.existsSync(dir);
    await fs.promises.rm(dir, { recursive: true, force: true });
    // Outside the directory when the data directory is too deep for a socket path.
    await fs.promises.rm(this.socketPathOf(id), { force: true });
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
    if (late.length > 0)
      this.log.warn({ killed: late.length }, 'tenants still running at the deadline were killed');
    return { stopped: processes.length - late.length, killed: late.length };
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
    const stored = await readTenantStats(this.tenantDir(id));
    return { tenantId: id, state: this.tenants.get(id)?.state ?? 'stopped', ...stored };
  }

  info(tenantId: string): TenantInfo {
    const id = this.checkId(tenantId);
    const t = this.tenants.get(id);
    if (!t) {
      return {
        tenantId: id,
        state: 'stopped',
        pid: null,
        socketPath: this.socketPathOf(id),
        readySince: null,
        lastActivityAt: null,
        inFlight: 0,
        starts: 0,
        crashes: 0,
        suspendedUntil: null,
      };
    }
    return {
      tenantId: t.id,
      state: t.state,
      pid: t.process?.pid ?? null,
      socketPath: t.socketPath,
      readySince: t.readySince,
      lastActivityAt: t.lastActivityAt,
      inFlight: t.inFlight,
      starts: t.starts,
      crashes: t.crashes,
      suspendedUntil: t.suspendedUntil > Date.now() ? t.suspendedUntil : null,
    };
  }

  /** Every tenant with a directory on this host or a record in this process, sorted by id. */
  list(): TenantInfo[] {
    const ids = new Set(this.tenants.keys());
    for (const entry of fs.readdirSync(this.tenantsRoot, { withFileTypes: true })) {
      if (entry.isDirectory() && TENANT_ID_PATTERN.test(entry.name)) ids.add(entry.name);
    }
    return [...ids].sort().map((id) => this.info(id));
  }

  // ---- starting ------------------------------------------------------------

  private beginStart(t: Tenant, delayMs: number, reason: 'wake' | 'restart'): void {
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
        this.recordFailure(t);
        t.log.error({ err: error, reason }, 'tenant start failed');
        if (reason === 'restart') this.scheduleRestart(t);
      },
    );
  }

  private backoff(t: Tenant, delayMs: number): Promise<void> {
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

  /** Starts the process (a spare when there is one) and resolves with the start's duration once it listens. */
  private async launch(t: Tenant): Promise<number> {
    const begun = performance.now();
    fs.mkdirSync(t.dir, { recursive: true });
    let spare = this.spares.take();
    while (spare && !spare.alive) spare = this.spares.take();
    const proc = spare ?? this.spawn(t.id, { ROOKERY_DATA: t.dir, ROOKERY_SOCKET: t.socketPath });
    t.process = proc;
    t.starts++;
    if (proc.pid !== undefined) this.limiter.apply(t.id, proc.pid);
    proc.onActivity = (activity) => {
      if (t.process !== proc) return;
      t.inFlight = activity.inFlight;
      const last = activity.inFlight > 0 ? Date.now() : activity.lastRequestAt;
      t.lastActivityAt = Math.max(t.lastActivityAt ?? 0, last);
    };
    void proc.exited.then((exit) => this.onExit(t, proc, exit));

    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        t.log.error(
          { pid: proc.pid, timeoutMs: this.config.startTimeoutMs },
          'tenant not ready in time; killing it',
        );
        proc.signal('SIGKILL');
        reject(
          new RookeryError(
            'TenantUnavailable',
            `Tenant ${t.id} did not start within ${this.config.startTimeoutMs} ms`,
          ),
        );
      }, this.config.startTimeoutMs);
    });
    try {
      if (spare) {
        await Promise.race([spare.spareReady, timeout]);
        spare.assign(t.dir, t.socketPath);
      }
      await Promise.race([proc.ready, timeout]);
      // A spare's indexer was forked before the spare joined the tenant's cgroup: it joins it now.
      if (proc.indexerPid !== undefined) this.limiter.apply(t.id, proc.indexerPid);
    } catch (error) {
      if (error instanceof RookeryError) throw error;
      throw new RookeryError(
        'TenantUnavailable',
        `Tenant ${t.id} could not start: ${(error as Error).message}`,
      );
    } finally {
      clearTimeout(timer);
      if (spare) this.spares.refill(SPARE_REFILL_DELAY_MS);
    }
    if (t.stopRequested) {
      // Stopped while it was starting: the stop already signalled it; make sure it goes.
      await proc.terminate(this.config.stopTimeoutMs);
      throw new RookeryError('TenantUnavailable', `Tenant ${t.id} was stopped while it started`);
    }
    const startMs = performance.now() - begun;
    t.state = 'running';
    t.readySince = Date.now();
    t.lastActivityAt = Date.now();
    t.inFlight = 0;
    this.metrics.starts.inc({ from: spare ? 'spare' : 'fresh' });
    this.metrics.startDuration.observe(startMs / 1000);
    t.log.info({ pid: proc.pid, startMs: Math.round(startMs), fromSpare: spare !== null }, 'tenant started');
    this.emit('started', t.id, { pid: proc.pid!, startMs, fromSpare: spare !== null });
    return startMs;
  }

  private onExit(t: Tenant, proc: TenantProcess, exit: Exit): void {
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
    this.recordFailure(t);
    t.log.error({ ...exit, pid: proc.pid }, 'tenant process exited without being asked to');
    this.scheduleRestart(t);
  }

  private recordFailure(t: Tenant): void {
    const now = Date.now();
    t.failures = t.failures.filter((at) => now - at < FAILURE_WINDOW_MS);
    t.failures.push(now);
  }

  private scheduleRestart(t: Tenant): void {
    if (this.closing) return;
    const recent = t.failures.length;
    if (recent > this.config.maxRestartsPerMinute) {
      t.suspendedUntil = t.failures[0]! + FAILURE_WINDOW_MS;
      t.log.error(
        { failures: recent, until: new Date(t.suspendedUntil).toISOString() },
        'tenant keeps crashing: automatic restarts and wakes suspended until the minute has passed',
      );
      return;
    }
    const delay = Math.min(
      this.config.restartBackoffMaxMs,
      this.config.restartBackoffMs * 2 ** Math.max(0, recent - 1),
    );
    t.log.warn({ delayMs: delay, failures: recent }, 'restarting the tenant after a crash');
    this.beginStart(t, delay, 'restart');
  }

  /** Waits for the start, at most the deadline; after it the caller gets TenantStarting and the start goes on. */
  private async withinDeadline(t: Tenant, start: Promise<number>): Promise<number> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new RookeryError(
              'TenantStarting',
              `Tenant ${t.id} is starting and was not ready within ${this.config.startDeadlineMs} ms; retry in a second`,
              { retryAfterSeconds: 1 },
            ),
          ),
        this.config.startDeadlineMs,
      );
    });
    try {
      return await Promise.race([start, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  // ---- idle stop -------------------------------------------------------------

  private stopIdleTenants(): void {
    const now = Date.now();
    for (const t of this.tenants.values()) {
      if (t.state !== 'running' || t.inFlight > 0) continue;
      const idleFor = now - (t.lastActivityAt ?? now);
      if (idleFor < this.config.idleStopMs) continue;
      this.metrics.idleStops.inc();
      t.log.info({ idleMs: idleFor }, 'tenant idle: stopping it');
      this.emit('idle', t.id);
      this.stop(t.id).catch((error) => t.log.error({ err: error }, 'idle stop failed'));
    }
  }

  // ---- processes and paths -----------------------------------------------------

  private spawn(tenantId: string | null, env: Record<string, string>): TenantProcess {
    const log = tenantId === null ? this.log.child({ spare: true }) : this.log.child({ tenant: tenantId });
    return spawnTenantProcess({
      command: this.command(tenantId),
      env: { ...this.baseEnv(), ...env },
      stdio: this.options.stdio ?? 'inherit',
      log,
    });
  }

  /** The host's environment minus its own settings, plus the tenant's log level and heap limit. */
  private baseEnv(): NodeJS.ProcessEnv {
    const source = this.options.env ?? process.env;
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(source)) {
      if (!key.startsWith('ROOKERY_') || TENANT_SETTINGS.has(key)) env[key] = value;
    }
    env.ROOKERY_LOG_LEVEL = this.config.tenantLogLevel;
    // In NODE_OPTIONS so that the indexer the tenant forks gets the same heap limit.
    env.NODE_OPTIONS = [source.NODE_OPTIONS, `--max-old-space-size=${this.config.tenantHeapMb}`]
      .filter(Boolean)
      .join(' ');
    return env;
  }

  private tenant(tenantId: string): Tenant {
    const id = this.checkId(tenantId);
    let t = this.tenants.get(id);
    if (!t) {
      t = {
        id,
        dir: this.tenantDir(id),
        socketPath: this.socketPathOf(id),
        log: this.log.child({ tenant: id }),
        state: 'stopped',
        process: null,
        starting: null,
        stopping: null,
        cancelRestart: null,
        stopRequested: false,
        lastActivityAt: null,
        inFlight: 0,
        readySince: null,
        starts: 0,
        crashes: 0,
        failures: [],
        suspendedUntil: 0,
      };
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

  private tenantDir(id: string): string {
    return path.join(this.tenantsRoot, id);
  }

  /**
   * `<data>/tenants/<id>/tenant.sock`, or, when that is longer than a Unix
   * socket path may be (deep data directories), `<tmp>/rookery-<uid>-<hash of the data dir>/<id>.sock`.
   */
  private socketPathOf(id: string): string {
    const preferred = path.join(this.tenantDir(id), 'tenant.sock');
    if (Buffer.byteLength(preferred) <= MAX_SOCKET_PATH) return preferred;
    const hash = createHash('sha256').update(this.tenantsRoot).digest('hex').slice(0, 12);
    const dir = path.join(os.tmpdir(), `rookery-${process.getuid?.() ?? 'user'}-${hash}`);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return path.join(dir, `${id}.sock`);
  }

  private countRunning(): number {
    let n = 0;
    for (const t of this.tenants.values()) if (t.state === 'running') n++;
    return n;
  }
}
