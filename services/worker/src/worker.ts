// One worker process's parts, put together: the job queue (SQLite or PostgreSQL, the same one the
// control plane enqueues on), the backup, restore, lifecycle sweep and tenant purge handlers, their
// schedulers, and a small HTTP server for /metrics and /healthz.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { openControlStore } from '@rookery/control-store';
import { type JobHandler, type JobQueue, openJobQueue, type StopWorking } from '@rookery/jobs';
import { ROOKERY_JOB_TYPES, type RookeryJobTypes } from '@rookery/protocol';
import type { Logger } from 'pino';
import type { WorkerConfig } from './config.js';
import { backupJobHandler } from './jobs/backup-job.js';
import { databaseJobHandler } from './jobs/database-job.js';
import { indexBuildJobHandler } from './jobs/index-build-job.js';
import { purgeJobHandler } from './jobs/purge-job.js';
import { restoreJobHandler } from './jobs/restore-job.js';
import { sweepJobHandler } from './jobs/sweep-job.js';
import { withTenantSafeErrors } from './jobs/tenant-safe-errors.js';
import { WorkerMetrics } from './metrics.js';
import { BackupScheduler } from './schedule/scheduler.js';
import { Schedules } from './schedule/schedules.js';
import { SweepScheduler } from './schedule/sweep-scheduler.js';
import type { BackupStorage } from './storage/backup-storage.js';
import { DirectoryStorage } from './storage/directory-storage.js';
import { S3Storage } from './storage/s3-storage.js';

export interface WorkerOptions {
  config: WorkerConfig;
  masterKey: Buffer;
  logger: Logger;
  /** Default: the bucket of `config.backupS3Url`, else a directory storage on `config.backupDir`. */
  storage?: BackupStorage;
  /** Job type definitions (tests shorten the leases); default ROOKERY_JOB_TYPES. */
  jobTypes?: RookeryJobTypes;
}

export interface RunningWorker {
  queue: JobQueue<RookeryJobTypes>;
  metrics: WorkerMetrics;
  scheduler: BackupScheduler | null;
  sweepScheduler: SweepScheduler | null;
  /** http://host:port of /metrics and /healthz. */
  url: string;
  /** Stops claiming jobs and scheduling, waits for running jobs, closes the queue and the server. */
  close(): Promise<void>;
}

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const { config, logger } = options;
  const storage = options.storage ?? storageOf(config);
  const metrics = new WorkerMetrics();
  const queue = await openJobQueue({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    types: options.jobTypes ?? ROOKERY_JOB_TYPES,
    logger,
  });
  // The control store (the same SQLite file or PostgreSQL database as the control plane's): restores
  // record the databases they create there, sweeps leave deleted tenants asleep.
  const controlStore = await openControlStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  // Whatever reaches a job's lastError (read by tenant admins) never names these: tenant-safe-errors.ts.
  const serverPlaces = [
    config.dataDir,
    config.mirrorDir,
    config.backupDir,
    config.tenantsDir,
    config.scratchDir,
    storage.location,
  ];
  const safe = <P>(handler: JobHandler<P>) => withTenantSafeErrors(handler, serverPlaces);
  const workOptions = {
    concurrency: config.concurrency,
    perTenantConcurrency: config.perTenantConcurrency,
    pollMs: config.pollMs,
  };
  const stops: StopWorking[] = [
    queue.work(
      'backup',
      safe(
        backupJobHandler({
          mirrorDir: config.mirrorDir,
          storage,
          masterKey: options.masterKey,
          metrics,
          settings: {
            compressionLevel: config.compressionLevel,
            readBytesPerSecond: config.backupMaxMbPerSecond * 1e6,
            maxChainLength: config.maxChainLength,
          },
        }),
      ),
      workOptions,
    ),
    queue.work(
      'restore',
      safe(
        restoreJobHandler({
          tenantsDir: config.tenantsDir,
          scratchDir: config.scratchDir,
          storage,
          masterKey: options.masterKey,
          metrics,
          records: controlStore,
        }),
      ),
      workOptions,
    ),
    queue.work(
      'lifecycle-sweep',
      safe(
        sweepJobHandler({
          host: { url: config.hostUrl, token: config.internalToken },
          metrics,
          tenants: controlStore,
        }),
      ),
      workOptions,
    ),
    queue.work(
      'tenant-purge',
      safe(
        purgeJobHandler({
          host: { url: config.hostUrl, token: config.internalToken },
          mirrorDir: config.mirrorDir,
          storage,
          metrics,
          queue,
        }),
      ),
      workOptions,
    ),
    queue.work(
      'index-build',
      safe(
        indexBuildJobHandler({
          mirrorDir: config.mirrorDir,
          scratchDir: config.scratchDir,
          metrics,
          maxDocumentsPerSecond: config.indexBuildMaxDocsPerSecond,
          batchSize: config.indexBuildBatch,
        }),
      ),
      workOptions,
    ),
    queue.work(
      'database',
      safe(
        databaseJobHandler({
          host: { url: config.hostUrl, token: config.internalToken },
          records: controlStore,
          metrics,
        }),
      ),
      workOptions,
    ),
  ];

  let scheduler: BackupScheduler | null = null;
  if (config.backupEveryMinutes > 0 || config.scheduleFile) {
    const schedules = Schedules.load(
      { everyMs: config.backupEveryMinutes * 60_000, fullEveryMs: config.fullBackupEveryHours * 3_600_000 },
      config.scheduleFile,
    );
    scheduler = new BackupScheduler({
      mirrorDir: config.mirrorDir,
      storage,
      queue,
      schedules,
      log: logger.child({ component: 'scheduler' }),
      tickMs: config.schedulerTickMs,
    });
    scheduler.start();
  }

  let sweepScheduler: SweepScheduler | null = null;
  if (config.sweepEveryMinutes > 0 && config.internalToken) {
    sweepScheduler = new SweepScheduler({
      mirrorDir: config.mirrorDir,
      queue,
      everyMs: config.sweepEveryMinutes * 60_000,
      log: logger.child({ component: 'sweep-scheduler' }),
      tickMs: config.schedulerTickMs,
    });
    sweepScheduler.start();
  } else if (config.sweepEveryMinutes > 0) {
    // Every sweep would fail without it: better one line at start than a failed job per database.
    logger.warn('ROOKERY_INTERNAL_TOKEN is not set: lifecycle sweeps are not scheduled');
  }

  const server = http.createServer((request, response) => {
    if (request.url === '/metrics') {
      metrics.text().then(
        (text) => response.writeHead(200, { 'content-type': metrics.contentType }).end(text),
        () => response.writeHead(500).end(),
      );
    } else if (request.url === '/healthz') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  logger.info(
    {
      mirror: config.mirrorDir,
      backups: storage.location,
      queue: config.databaseUrl ? 'postgresql' : 'sqlite',
    },
    'worker started',
  );

  return {
    queue,
    metrics,
    scheduler,
    sweepScheduler,
    url: `http://${config.host}:${port}`,
    async close() {
      await scheduler?.stop();
      await sweepScheduler?.stop();
      await Promise.all(stops.map((stop) => stop()));
      await queue.close();
      await controlStore.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function storageOf(config: WorkerConfig): BackupStorage {
  if (!config.backupS3Url) return new DirectoryStorage(config.backupDir);
  const [bucket = '', ...prefix] = config.backupS3Url.slice('s3://'.length).split('/');
  return new S3Storage({
    bucket,
    prefix: prefix.filter((p) => p !== '').join('/'),
    region: config.backupS3Region,
    ...(config.backupS3Endpoint ? { endpoint: config.backupS3Endpoint } : {}),
  });
}
