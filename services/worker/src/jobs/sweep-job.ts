// The lifecycle sweep job: archive the documents of one database whose `@archive-at` has passed and
// delete those whose `@expires` has. The tenant process does the work, in batches through the
// database's single writer (POST /databases/{db}/admin/sweep); this job wakes the tenant through
// the host, asks for batches with one fixed `now` while the tenant answers `More`, and reports the
// totals. It never touches the tenant's files: another writer there would corrupt them.

import type { ControlStore } from '@rookery/control-store';
import type { JobHandler } from '@rookery/jobs';
import { DEFAULT_SWEEP_LIMIT, type LifecycleSweepJobPayload, type SweepResult } from '@rookery/protocol';
import { z } from 'zod';
import type { WorkerMetrics } from '../metrics.js';
import { JobReporter } from './job-reporter.js';
import { answerError, callJson, callJsonPatiently, hostApi, wakeTenant } from './tenant-http.js';
import { tenantDirectoryName } from './tenant-paths.js';

export interface SweepJobDependencies {
  /** The host's internal API (ROOKERY_HOST_URL) and its token (ROOKERY_INTERNAL_TOKEN). */
  host: { url: string; token: string | undefined };
  metrics: WorkerMetrics;
  /** The control store: a tenant deleted since the sweep was scheduled is not woken (its purge may be running). */
  tenants: Pick<ControlStore, 'getTenant'>;
  /** Documents per batch (the tenant's `limit`). */
  batchSize?: number;
  /**
   * Batches one job asks for at most. A database with more due documents than this many batches
   * hold is left with the rest for the next sweep, rather than holding the job past its lease.
   */
  maxRounds?: number;
}

const DEFAULT_MAX_ROUNDS = 1_000;

/** The tenant's answer, checked: a job that miscounts would loop or report nonsense. */
const SweepResultSchema: z.ZodType<SweepResult> = z.object({
  Archived: z.number().int().nonnegative(),
  Expired: z.number().int().nonnegative(),
  More: z.boolean(),
});

export function sweepJobHandler(deps: SweepJobDependencies): JobHandler<LifecycleSweepJobPayload> {
  const batchSize = deps.batchSize ?? DEFAULT_SWEEP_LIMIT;
  const maxRounds = deps.maxRounds ?? DEFAULT_MAX_ROUNDS;
  return async (job, context) => {
    const { database } = job.payload;
    // Fixed once for the whole job: every batch must agree on what is due, or a long sweep
    // would chase documents that become due while it runs.
    const now = job.payload.now ?? new Date().toISOString();
    const log = context.log.child({ db: database });
    const reporter = new JobReporter(job, database, context, log, deps.metrics, null);
    const totals = { archived: 0, expired: 0, rounds: 0, more: false };
    log.info({ now }, 'lifecycle sweep started');
    try {
      const tenant = tenantDirectoryName(job.tenantId);
      // Waking a deleted tenant would make its directory again, under the purge of its data.
      if (!(await deps.tenants.getTenant(tenant))) {
        await reporter.finish('skipped', { now, reason: 'tenant deleted' });
        log.info('lifecycle sweep skipped: the tenant was deleted');
        return;
      }
      const host = hostApi(deps.host, 'wake tenants to sweep them');
      const socketPath = await wakeTenant(host, tenant, context.signal);
      const sweepPath = `/databases/${encodeURIComponent(database)}/admin/sweep`;
      do {
        const answer = await callJsonPatiently(
          () =>
            callJson({ socketPath }, 'POST', sweepPath, {
              body: { now, limit: batchSize },
              signal: context.signal,
            }),
          context.signal,
        );
        const result = SweepResultSchema.safeParse(answer.body);
        if (answer.status !== 200 || !result.success) throw answerError(answer, `Tenant ${tenant}`);
        totals.archived += result.data.Archived;
        totals.expired += result.data.Expired;
        totals.rounds += 1;
        totals.more = result.data.More;
        // No bytes of its own to count: the reporter carries the totals to the job and the log.
        const { archived, expired, rounds } = totals;
        reporter.update({ phase: 'sweep', bytesRead: 0, bytesToRead: 0, now, archived, expired, rounds });
      } while (totals.more && totals.rounds < maxRounds);

      const summary = { now, ...totals };
      await reporter.finish('completed', summary);
      if (totals.more)
        log.warn(summary, 'lifecycle sweep stopped after its last round; the next one continues');
      else log.info(summary, 'lifecycle sweep completed');
    } catch (error) {
      await reporter.finish('failed', {});
      log.error({ err: error }, 'lifecycle sweep failed');
      throw error;
    }
  };
}
