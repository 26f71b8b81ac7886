// rookery database create|list|delete — the control plane's record of a
// tenant's databases. The tenant's own data lives in its container: creating a
// database there is `PUT /admin/databases` through the gateway.
import { requireTenant } from '@rookery/control';
import type { Command } from 'commander';
import { z } from 'zod';
import { action } from '../action.js';
import { parseCommandInput } from '../inputs.js';
import { type CliIo, formatTable, isoTime } from '../output.js';

const TenantAndName = z.object({ args: z.tuple([z.string().min(1), z.string()]), options: z.object({}) });
const TenantOnly = z.object({ args: z.tuple([z.string().min(1)]), options: z.object({}) });

export function registerDatabaseCommands(program: Command, io: CliIo): void {
  const database = program
    .command('database')
    .description("a tenant's database records: create, list, delete");

  database
    .command('create')
    .description('record a database for a tenant')
    .argument('<tenant>')
    .argument('<name>')
    .action(
      action(io, async (context, input) => {
        const [tenant, name] = parseCommandInput(TenantAndName, input, ['tenant', 'name']).args;
        const record = await (await context.store()).createDatabase(tenant, name);
        await context.print(record, () => `Recorded database ${record.name} for tenant ${record.tenantId}.`);
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
    .description('delete a database record')
    .argument('<tenant>')
    .argument('<name>')
    .action(
      action(io, async (context, input) => {
        const [tenant, name] = parseCommandInput(TenantAndName, input, ['tenant', 'name']).args;
        await (await context.store()).deleteDatabase(tenant, name);
        await context.print(
          { tenantId: tenant, deleted: name },
          () => `Deleted the record of ${tenant}/${name}.`,
        );
      }),
    );
}
