// rookery database create|list|delete. A tenant's databases live in its container: create and
// delete queue a job that a worker runs (it wakes the tenant through the host and calls the
// tenant's admin API, as a tenant admin does through the gateway), and the control store's record
// follows when it is done. --wait waits for that job; list reads the records.
import { setTimeout as sleep } from 'node:timers/promises';
import { requireTenant } from '@rookery/control-store';
import type { Job } from '@rookery/jobs';
import { type DatabaseJobPayload, RookeryError } from '@rookery/protocol';
import type { Command } from 'commander';
import { z } from 'zod';
import { action } from '../action.js';
import type { CliContext } from '../context.js';
import { parseCommandInput, waitOption } from '../inputs.js';
import { type CliIo, formatTable, isoTime } from '../output.js';

const DEFAULT_WAIT_SECONDS = 60;
const POLL_MS = 200;

const WaitOption = waitOption(DEFAULT_WAIT_SECONDS);
const CreateInput = z.object({
  args: z.tuple([z.string().min(1), z.string()]),
  options: z.object({ wait: WaitOption }),
});
const DeleteInput = z.object({
  args: z.tuple([z.string().min(1), z.string()]),
  options: z.object({ wait: WaitOption, yes: z.boolean().optional() }),
});
const TenantOnly = z.object({ args: z.tuple([z.string().min(1)]), options: z.object({}) });

export function registerDatabaseCommands(program: Command, io: CliIo): void {
  const database = program.command('database').description("a tenant's databases: create, list, delete");

  database
    .command('create')
    .description("create a database in a tenant's container (a worker runs the job) and record it")
    .argument('<tenant>')
    .argument('<name>')
    .option('--wait [seconds]', `wait for the job to finish (default ${DEFAULT_WAIT_SECONDS} s)`)
    .action(
      action(io, async (context, input) => {
        const { args, options } = parseCommandInput(CreateInput, input, ['tenant', 'name']);
        await runDatabaseJob(context, args[0], { database: args[1], action: 'create' }, options.wait);
      }),
    );

  database
    .command('list')
    .description("list a tenant's databases")
    .argument('<tenant>')
    .action(
      action(io, async (context, input) => {
        const [tenant] = parseCommandInput(TenantOnly, input, ['tenant']).args;
        const store = await context.store();
        await requireTenant(store, tenant); // an unknown tenant is an error, not an empty list
        const databases = await store.listDatabases(tenant);
        await context.print(databases, () =>
          databases.length === 0
            ? `Tenant ${tenant} has no database records.`
            : formatTable(
                ['NAME', 'CREATED'],
                databases.map((d) => [d.name, isoTime(d.createdAt)]),
              ),
        );
      }),
    );

  database
    .command('delete')
    .description("delete a database and all its documents from a tenant's container (a worker runs the job)")
    .argument('<tenant>')
    .argument('<name>')
    .option('--wait [seconds]', `wait for the job to finish (default ${DEFAULT_WAIT_SECONDS} s)`)
    .option('--yes', 'confirm: this cannot be undone')
    .action(
      action(io, async (context, input) => {
        const { args, options } = parseCommandInput(DeleteInput, input, ['tenant', 'name']);
        if (!options.yes) {
          throw new RookeryError(
            'InvalidRequest',
            `Deleting database ${args[1]} of tenant ${args[0]} deletes all its documents and indexes and cannot be undone; add --yes to go ahead.`,
          );
        }
        await runDatabaseJob(context, args[0], { database: args[1], action: 'delete' }, options.wait);
      }),
    );
}

/** Queues the job (the payload is checked there: a bad name fails here, not in the worker), then waits if asked. */
async function runDatabaseJob(
  context: CliContext,
  tenant: string,
  payload: Omit<DatabaseJobPayload, 'requestedBy'>,
  waitSeconds: number | null,
): Promise<void> {
  await requireTenant(await context.store(), tenant);
  const jobs = await context.jobs();
  const jobId = await jobs.enqueue({
    type: 'database',
    tenantId: tenant,
    payload: { ...payload, requestedBy: 'rookery-cli' },
  });
  const what = `${payload.action === 'create' ? 'Creating' : 'Deleting'} database ${payload.database} of tenant ${tenant}`;
  if (waitSeconds === null) {
    await context.print(
      { tenantId: tenant, ...payload, jobId, state: 'queued' },
      () => `${what}: job ${jobId} is queued (a worker runs it; add --wait to wait for it).`,
    );
    return;
  }
  const job = await finishedJob(jobs, jobId, waitSeconds);
  const result = { tenantId: tenant, ...payload, jobId, state: job.state, error: job.lastError };
  if (job.state === 'completed') {
    await context.print(result, () => `${what}: done (job ${jobId}).`);
    return;
  }
  if (job.state === 'failed' || job.state === 'cancelled') {
    throw new RookeryError(
      'InternalError',
      `${what}: job ${jobId} ${job.state}: ${job.lastError ?? 'no error recorded'}`,
      {
        jobId,
        state: job.state,
      },
    );
  }
  throw new RookeryError(
    'JobQueueUnavailable',
    `${what}: job ${jobId} is still ${job.state} after ${waitSeconds} s; is a worker running (npm start runs one)? It stays queued.`,
    { jobId, state: job.state },
  );
}

async function finishedJob(
  jobs: Awaited<ReturnType<CliContext['jobs']>>,
  id: string,
  seconds: number,
): Promise<Job> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const job = await jobs.get(id);
    if (!job) throw new RookeryError('JobNotFound', `Job ${id} is gone from the queue.`);
    if (job.state === 'completed' || job.state === 'failed' || job.state === 'cancelled') return job;
    if (Date.now() >= deadline) return job;
    await sleep(POLL_MS);
  }
}
