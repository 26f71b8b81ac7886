// rookery usage <tenant> — what a tenant used, per minute, as the gateways
// metered it (requests, bytes on the wire, work units reported by the tenant).
import { requireTenant, type UsageRow } from '@rookery/control-store';
import { RookeryError } from '@rookery/protocol';
import type { Command } from 'commander';
import { z } from 'zod';
import { action } from '../action.js';
import { parseCommandInput, TimeArg } from '../inputs.js';
import { type CliIo, formatTable, isoTime } from '../output.js';

const DAY_MS = 24 * 60 * 60_000;

const UsageInput = z.object({
  args: z.tuple([z.string().min(1)]),
  options: z.object({ from: TimeArg.optional(), to: TimeArg.optional() }),
});

export function registerUsageCommand(program: Command, io: CliIo): void {
  program
    .command('usage')
    .description("a tenant's usage per minute (default: the last 24 hours)")
    .argument('<tenant>')
    .option('--from <time>', 'ISO date/time or epoch ms (default: 24 hours before --to)')
    .option('--to <time>', 'ISO date/time or epoch ms (default: now)')
    .action(
      action(io, async (context, input) => {
        const { args, options } = parseCommandInput(UsageInput, input, ['tenant']);
        const to = options.to ?? Date.now();
        const from = options.from ?? to - DAY_MS;
        if (from > to) throw new RookeryError('InvalidRequest', '--from: must not be after --to.');
        const store = await context.store();
        await requireTenant(store, args[0]);
        const rows = await store.usage(args[0], from, to);
        const total = totals(rows);
        await context.print({ tenantId: args[0], from, to, minutes: rows, total }, () =>
          rows.length === 0
            ? `No usage recorded for ${args[0]} between ${isoTime(from)} and ${isoTime(to)}.`
            : formatTable(
                ['MINUTE', 'REQUESTS', 'BYTES IN', 'BYTES OUT', 'WORK UNITS'],
                [
                  ...rows.map((r) => [isoTime(r.minute), r.requests, r.bytesIn, r.bytesOut, r.workUnits]),
                  ['total', total.requests, total.bytesIn, total.bytesOut, total.workUnits],
                ],
              ),
        );
      }),
    );
}

function totals(rows: readonly UsageRow[]) {
  const sum = (pick: (row: UsageRow) => number) => rows.reduce((n, row) => n + pick(row), 0);
  return {
    requests: sum((r) => r.requests),
    bytesIn: sum((r) => r.bytesIn),
    bytesOut: sum((r) => r.bytesOut),
    workUnits: sum((r) => r.workUnits),
  };
}
