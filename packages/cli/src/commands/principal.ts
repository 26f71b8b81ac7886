// rookery principal create|list|delete — programs and people, in a tenant or
// (operators) across all of them, with the role the gateway authorises by.
import { PrincipalKindSchema, requireTenant } from '@rookery/control-store';
import { RookeryError } from '@rookery/protocol';
import type { Command } from 'commander';
import { z } from 'zod';
import { action, collect } from '../action.js';
import { parseCommandInput, RoleArgs } from '../inputs.js';
import { type CliIo, formatTable, isoTime, roleText } from '../output.js';

const CreateInput = z.object({
  args: z.tuple([]),
  options: z.object({
    tenant: z.string().min(1).optional(),
    operator: z.boolean().optional(),
    kind: PrincipalKindSchema,
    name: z.string(),
    role: RoleArgs.optional(),
  }),
});
const ListInput = z.object({
  args: z.tuple([]),
  options: z.object({ tenant: z.string().min(1).optional(), operators: z.boolean().optional() }),
});
const IdInput = z.object({ args: z.tuple([z.string().min(1)]), options: z.object({}) });

export function registerPrincipalCommands(program: Command, io: CliIo): void {
  const principal = program.command('principal').description('programs and people, and their roles');

  principal
    .command('create')
    .description('create a principal in a tenant (or an operator, across every tenant)')
    .option('--tenant <id>', 'the tenant it belongs to')
    .option('--operator', 'an operator instead: reaches every tenant (no --tenant, no --role)')
    .requiredOption('--kind <kind>', 'program (certificate only) or person (certificate + TOTP)')
    .requiredOption('--name <name>', 'shown in certificates and listings')
    .option(
      '--role <role>',
      'tenant-admin, or db:<name>=read-write|read-only (repeat for several databases)',
      collect,
    )
    .action(
      action(io, async (context, input) => {
        const { options } = parseCommandInput(CreateInput, input);
        if (options.operator === (options.tenant !== undefined)) {
          throw new RookeryError('InvalidRequest', 'Give either --tenant <id> or --operator.');
        }
        if (options.operator && options.role && options.role.kind !== 'operator') {
          throw new RookeryError(
            'InvalidRequest',
            '--role: an operator has the role operator; leave --role out.',
          );
        }
        if (!options.operator && !options.role) {
          throw new RookeryError(
            'InvalidRequest',
            '--role: give tenant-admin, or db:<name>=read-write|read-only (repeatable).',
          );
        }
        const created = await (await context.store()).createPrincipal({
          tenantId: options.tenant ?? null,
          kind: options.kind,
          name: options.name,
          role: options.operator ? { kind: 'operator' } : options.role!,
        });
        await context.print(created, () =>
          [
            `Created ${created.kind} "${created.name}" (${roleText(created.role)}): ${created.id}`,
            `Issue its certificate with: rookery cert issue ${created.id} --out <dir>`,
            ...(created.kind === 'person'
              ? [`Enrol its authenticator with: rookery totp enrol ${created.id}`]
              : []),
          ].join('\n'),
        );
      }),
    );

  principal
    .command('list')
    .description("list a tenant's principals, or the operators")
    .option('--tenant <id>')
    .option('--operators')
    .action(
      action(io, async (context, input) => {
        const { options } = parseCommandInput(ListInput, input);
        if (Boolean(options.operators) === (options.tenant !== undefined)) {
          throw new RookeryError('InvalidRequest', 'Give either --tenant <id> or --operators.');
        }
        const store = await context.store();
        if (options.tenant !== undefined) await requireTenant(store, options.tenant);
        const principals = await store.listPrincipals(options.tenant ?? null);
        await context.print(principals, () =>
          principals.length === 0
            ? 'No principals.'
            : formatTable(
                ['ID', 'KIND', 'NAME', 'ROLE', 'CREATED'],
                principals.map((p) => [p.id, p.kind, p.name, roleText(p.role), isoTime(p.createdAt)]),
              ),
        );
      }),
    );

  principal
    .command('delete')
    .description('delete a principal; its certificates are revoked')
    .argument('<principal>', 'the id shown by principal list')
    .action(
      action(io, async (context, input) => {
        const [id] = parseCommandInput(IdInput, input, ['principal']).args;
        await (await context.store()).deletePrincipal(id);
        await context.print({ deleted: id }, () => `Deleted principal ${id}; its certificates are revoked.`);
      }),
    );
}
