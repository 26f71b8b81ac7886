// rookery tenant create|list|show|delete|quota
import {
  deleteTenant,
  PrincipalKindSchema,
  provisionTenant,
  requireTenant,
  type Tenant,
} from '@rookery/control-store';
import { RookeryError } from '@rookery/protocol';
import type { Command } from 'commander';
import { z } from 'zod';
import { action } from '../action.js';
import { CountArg, parseCommandInput, SizeArg } from '../inputs.js';
import { type CliIo, formatBytes, formatTable, isoTime, roleText } from '../output.js';

const TenantIdArg = z.string().min(1);
const QuotaOptions = {
  requestsPerSecond: CountArg.optional(),
  storage: SizeArg.optional(),
};

const CreateInput = z.object({
  args: z.tuple([TenantIdArg]),
  options: z.object({
    name: z.string().optional(),
    ...QuotaOptions,
    admin: z.string().optional(),
    adminKind: PrincipalKindSchema,
  }),
});
const IdInput = z.object({ args: z.tuple([TenantIdArg]), options: z.object({}) });
const DeleteInput = z.object({
  args: z.tuple([TenantIdArg]),
  options: z.object({ yes: z.boolean().optional() }),
});
const QuotaInput = z.object({ args: z.tuple([TenantIdArg]), options: z.object(QuotaOptions) });

function quotaText(tenant: Tenant): string {
  return `${tenant.quota.requestsPerSecond} requests/s, ${formatBytes(tenant.quota.storageBytes)} stored`;
}

function quotaPatch(options: { requestsPerSecond?: number | undefined; storage?: number | undefined }) {
  return {
    ...(options.requestsPerSecond === undefined ? {} : { requestsPerSecond: options.requestsPerSecond }),
    ...(options.storage === undefined ? {} : { storageBytes: options.storage }),
  };
}

export function registerTenantCommands(program: Command, io: CliIo): void {
  const tenant = program.command('tenant').description('tenants: create, list, show, delete, quotas');

  tenant
    .command('create')
    .description('create a tenant, optionally with its first admin principal')
    .argument('<id>', 'lower-case letters, digits and "-" (it appears in URLs and directory names)')
    .option('--name <name>', 'display name (default: the id)')
    .option('--requests-per-second <n>', 'request rate quota (default 200)')
    .option('--storage <size>', 'storage quota, e.g. 10GiB (default 1 GiB)')
    .option('--admin <name>', 'also create an admin principal with this name')
    .option('--admin-kind <kind>', 'program or person', 'program')
    .action(
      action(io, async (context, input) => {
        const { args, options } = parseCommandInput(CreateInput, input, ['id']);
        const [id] = args;
        const result = await provisionTenant(
          await context.store(),
          {
            id,
            name: options.name ?? id,
            quota: quotaPatch(options),
            ...(options.admin === undefined
              ? {}
              : { admin: { name: options.admin, kind: options.adminKind } }),
          },
          // A deleted tenant's id stays taken until its purge has completed (TenantPurgePending).
          await context.jobs(),
        );
        await context.print(result, () => {
          const lines = [`Created tenant ${result.tenant.id} (${quotaText(result.tenant)}).`];
          if (result.admin) {
            lines.push(
              `Admin ${result.admin.kind} "${result.admin.name}": ${result.admin.id}`,
              `Issue its certificate with: rookery cert issue ${result.admin.id} --out <dir>`,
            );
          }
          return lines.join('\n');
        });
      }),
    );

  tenant
    .command('list')
    .description('list tenants')
    .action(
      action(io, async (context) => {
        const tenants = await (await context.store()).listTenants();
        await context.print(tenants, () =>
          tenants.length === 0
            ? 'No tenants yet: rookery tenant create <id>'
            : formatTable(
                ['ID', 'NAME', 'REQUESTS/S', 'STORAGE', 'CREATED'],
                tenants.map((t) => [
                  t.id,
                  t.name,
                  t.quota.requestsPerSecond,
                  formatBytes(t.quota.storageBytes),
                  isoTime(t.createdAt),
                ]),
              ),
        );
      }),
    );

  tenant
    .command('show')
    .description('a tenant with its quota, databases and principals')
    .argument('<id>')
    .action(
      action(io, async (context, input) => {
        const [id] = parseCommandInput(IdInput, input, ['id']).args;
        const store = await context.store();
        const found = await requireTenant(store, id);
        const [databases, principals] = await Promise.all([
          store.listDatabases(id),
          store.listPrincipals(id),
        ]);
        await context.print({ tenant: found, databases, principals }, () =>
          [
            `Tenant ${found.id} (${found.name}), created ${isoTime(found.createdAt)}`,
            `Quota: ${quotaText(found)}`,
            `Databases: ${databases.length === 0 ? 'none recorded' : databases.map((d) => d.name).join(', ')}`,
            `Principals: ${principals.length === 0 ? 'none' : ''}`,
            ...principals.map((p) => `  ${p.id}  ${p.kind}  ${p.name}  ${roleText(p.role)}`),
          ].join('\n'),
        );
      }),
    );

  tenant
    .command('delete')
    .description(
      "delete a tenant: its records go, its principals' certificates are revoked, and a job purges its data",
    )
    .argument('<id>')
    .option('--yes', 'confirm: this cannot be undone')
    .action(
      action(io, async (context, input) => {
        const { args, options } = parseCommandInput(DeleteInput, input, ['id']);
        if (!options.yes) {
          throw new RookeryError(
            'InvalidRequest',
            `Deleting tenant ${args[0]} revokes every certificate of its principals, purges its data and cannot be undone; add --yes to go ahead.`,
          );
        }
        const purgeJobId = await deleteTenant(
          await context.store(),
          await context.jobs(),
          args[0],
          'rookery-cli',
        );
        await context.print(
          { deleted: args[0], purgeJobId },
          () =>
            `Deleted tenant ${args[0]}; its files, mirror and backups are purged by job ${purgeJobId} (a worker runs it).`,
        );
      }),
    );

  tenant
    .command('quota')
    .description("show a tenant's quota, or change it with the options")
    .argument('<id>')
    .option('--requests-per-second <n>', 'request rate quota')
    .option('--storage <size>', 'storage quota, e.g. 10GiB')
    .action(
      action(io, async (context, input) => {
        const { args, options } = parseCommandInput(QuotaInput, input, ['id']);
        const store = await context.store();
        const patch = quotaPatch(options);
        const updated =
          Object.keys(patch).length > 0
            ? await store.updateQuota(args[0], patch)
            : await requireTenant(store, args[0]);
        await context.print(updated.quota, () => `Tenant ${updated.id}: ${quotaText(updated)}`);
      }),
    );
}
