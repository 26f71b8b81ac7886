// The database job: creates or deletes one database in a tenant's container for the operator's
// CLI. The worker wakes the tenant through the host, calls the tenant's admin API as a tenant admin
// does through the gateway, then brings the control store's record in line. Each step is
// idempotent (a database that already exists, or is already gone, is done), so a failed attempt is
// retried by the queue from the start.
import type { ControlStore } from '@rookery/control-store';
import type { JobHandler } from '@rookery/jobs';
import { type DatabaseJobPayload, isRookeryError, ProblemSchema } from '@rookery/protocol';
import type { WorkerMetrics } from '../metrics.js';
import { JobReporter } from './job-reporter.js';
import { answerError, callJson, callJsonPatiently, hostApi, wakeTenant } from './tenant-http.js';

export interface DatabaseJobDependencies {
  /** The host's internal API (ROOKERY_HOST_URL) and its token (ROOKERY_INTERNAL_TOKEN). */
  host: { url: string; token: string | undefined };
  records: Pick<ControlStore, 'createDatabase' | 'deleteDatabase'>;
  metrics: WorkerMetrics;
}

export function databaseJobHandler(deps: DatabaseJobDependencies): JobHandler<DatabaseJobPayload> {
  return async (job, context) => {
    const { database, action } = job.payload;
    const log = context.log.child({ tenant: job.tenantId, targetDb: database });
    const reporter = new JobReporter(job, database, context, log, deps.metrics, null);
    try {
      const host = hostApi(deps.host, `${action} database ${database} of tenant ${job.tenantId}`);
      reporter.update({ phase: 'tenant', bytesRead: 0, bytesToRead: 0 });
      const socketPath = await wakeTenant(host, job.tenantId, context.signal);
      const call = (method: string, path: string, body?: unknown) =>
        callJsonPatiently(() => callJson({ socketPath }, method, path, { body, signal: context.signal }));
      let changed: boolean;
      if (action === 'create') {
        const answer = await call('PUT', '/admin/databases', { Name: database });
        changed = answer.status === 201;
        if (!changed && !isProblem(answer.body, 'DatabaseAlreadyExists')) {
          throw answerError(answer, `Tenant ${job.tenantId}`);
        }
      } else {
        const answer = await call('DELETE', `/admin/databases?name=${encodeURIComponent(database)}`);
        changed = answer.status === 204;
        if (!changed && !isProblem(answer.body, 'DatabaseNotFound')) {
          throw answerError(answer, `Tenant ${job.tenantId}`);
        }
      }

      reporter.update({ phase: 'record', bytesRead: 0, bytesToRead: 0 });
      await recordOutcome(deps.records, job.tenantId, database, action);
      const summary = { action, database, changed };
      await reporter.finish('completed', summary);
      log.info(summary, `database ${database} ${action === 'create' ? 'created' : 'deleted'}`);
    } catch (error) {
      await reporter.finish('failed', {});
      log.error({ err: error }, `database ${action} failed; the queue retries it`);
      throw error;
    }
  };
}

function isProblem(body: unknown, code: string): boolean {
  const problem = ProblemSchema.safeParse(body);
  return problem.success && problem.data.code === code;
}

/** The control store's record follows the container: present after a create, gone after a delete. */
async function recordOutcome(
  records: DatabaseJobDependencies['records'],
  tenantId: string,
  database: string,
  action: DatabaseJobPayload['action'],
): Promise<void> {
  try {
    if (action === 'create') await records.createDatabase(tenantId, database);
    else await records.deleteDatabase(tenantId, database);
  } catch (error) {
    const settled = action === 'create' ? 'DatabaseAlreadyExists' : 'DatabaseNotFound';
    if (!isRookeryError(error) || error.code !== settled) throw error;
  }
}
