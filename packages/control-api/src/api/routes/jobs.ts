// The worker fleet's jobs as a tenant sees them: its backups and restores, their state, attempts,
// last error and progress (read from the job queue, which the workers report into), and asking
// for a backup of one of its databases or a restore of a backup into a new database. Another
// tenant's job reads as one that does not exist.

import type { ControlStore, Tenant } from '@rookery/control-store';
import type { Job, JobQueue } from '@rookery/jobs';
import { backupDedupeKey, documented, RookeryError, type RookeryJobTypes } from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../caller.js';
import { bodyOf, type ControlContext, paramsOf, queryOf } from '../context.js';
import {
  BackupRequestSchema,
  JobListQuerySchema,
  JobParamsSchema,
  RestoreRequestSchema,
  TenantParamsSchema,
} from '../schemas.js';
import { tenantInScope } from '../scope.js';

/** Retries of a backup or restore asked for here: three attempts, a minute apart and more. */
const REQUESTED_JOB = { maxAttempts: 3, backoffMs: 60_000 } as const;

const TenantParams = documented(TenantParamsSchema);

export function jobRoutes(app: FastifyInstance, { store, jobs }: ControlContext): void {
  const listSchema = {
    summary: "The tenant's backups and restores",
    params: TenantParams,
    querystring: documented(JobListQuerySchema),
  };
  app.get('/jobs', { schema: listSchema }, async (request) => {
    const { tenantId } = paramsOf(TenantParamsSchema, request);
    const tenant = await tenantInScope(store, callerOf(request.raw), tenantId);
    const filter = queryOf(JobListQuerySchema, request);
    return { jobs: (await queueOf(jobs).list({ ...filter, tenantId: tenant.id })).map(jobView) };
  });

  const readSchema = {
    summary: 'A job: its state, attempts, last error and progress',
    params: documented(JobParamsSchema),
  };
  app.get('/jobs/:jobId', { schema: readSchema }, async (request) => {
    const { tenantId, jobId } = paramsOf(JobParamsSchema, request);
    const tenant = await tenantInScope(store, callerOf(request.raw), tenantId);
    const job = await queueOf(jobs).get(jobId);
    if (!job || job.tenantId !== tenant.id) {
      throw new RookeryError(
        'JobNotFound',
        `Tenant ${tenant.id} has no job "${jobId}"; list them with GET /control/jobs.`,
        { jobId },
      );
    }
    return jobView(job);
  });

  const backupSchema = {
    summary: 'Back a database up',
    params: TenantParams,
    body: documented(BackupRequestSchema),
  };
  app.post('/backups', { schema: backupSchema }, async (request, reply) => {
    const { tenantId } = paramsOf(TenantParamsSchema, request);
    const caller = callerOf(request.raw);
    const tenant = await tenantInScope(store, caller, tenantId);
    const { database, kind, indexes } = bodyOf(BackupRequestSchema, request, 'backup request');
    const name = await databaseOf(store, tenant, database);
    const queue = queueOf(jobs);
    const id = await queue.enqueue({
      type: 'backup',
      tenantId: tenant.id,
      payload: { database: name, kind, indexes, requestedBy: caller.id },
      dedupeKey: backupDedupeKey(tenant.id, name),
      ...REQUESTED_JOB,
    });
    return reply.code(202).send(jobView((await queue.get(id))!));
  });

  const restoreSchema = {
    summary: 'Restore a backup into a new database',
    params: TenantParams,
    body: documented(RestoreRequestSchema),
  };
  app.post('/restores', { schema: restoreSchema }, async (request, reply) => {
    const { tenantId } = paramsOf(TenantParamsSchema, request);
    const caller = callerOf(request.raw);
    const tenant = await tenantInScope(store, caller, tenantId);
    const input = bodyOf(RestoreRequestSchema, request, 'restore request');
    const existing = await store.listDatabases(tenant.id);
    if (existing.some((d) => d.name.toLowerCase() === input.targetDatabase.toLowerCase())) {
      throw new RookeryError(
        'DatabaseAlreadyExists',
        `Database ${input.targetDatabase} already exists; a backup is restored into a new database, so name one that does not.`,
        { database: input.targetDatabase },
      );
    }
    // The backed-up database need not exist any more: its backups outlive it.
    const queue = queueOf(jobs);
    const id = await queue.enqueue({
      type: 'restore',
      tenantId: tenant.id,
      payload: { ...input, requestedBy: caller.id },
      ...REQUESTED_JOB,
    });
    return reply.code(202).send(jobView((await queue.get(id))!));
  });
}

/** The queue, or 503 when the host of this API was started without one. */
/** The queue, or 503 JobQueueUnavailable when this control plane was started without one. */
export function queueOf(jobs: JobQueue<RookeryJobTypes> | null): JobQueue<RookeryJobTypes> {
  if (!jobs) {
    throw new RookeryError(
      'JobQueueUnavailable',
      'This control plane was started without the job queue, so jobs can neither be listed nor asked for (nor tenants deleted: a job purges their data); retry later.',
    );
  }
  return jobs;
}

/** The database's name as recorded, or DatabaseNotFound (also for another tenant's). */
async function databaseOf(store: ControlStore, tenant: Tenant, name: string): Promise<string> {
  const record = (await store.listDatabases(tenant.id)).find(
    (d) => d.name.toLowerCase() === name.toLowerCase(),
  );
  if (!record) {
    throw new RookeryError(
      'DatabaseNotFound',
      `Tenant ${tenant.id} has no database ${name}; list them with GET /control/databases.`,
      { database: name },
    );
  }
  return record.name;
}

/** A job as the API shows it: what the queue knows, without its dedupe key (an internal detail). */
function jobView(job: Job) {
  const { dedupeKey: _dedupeKey, ...view } = job;
  return view;
}
