// rookery bootstrap — what `npm start` does before starting the services: a
// first tenant with an admin certificate in <data>/certs. Safe to repeat.
import type { Command } from 'commander';
import { z } from 'zod';
import { action } from '../action.js';
import { bootstrap } from '../bootstrap.js';
import { parseCommandInput } from '../inputs.js';
import { type CliIo, isoTime } from '../output.js';

const BootstrapInput = z.object({ args: z.tuple([]), options: z.object({ tenant: z.string().min(1) }) });

export function registerBootstrapCommand(program: Command, io: CliIo): void {
  program
    .command('bootstrap')
    .description('create the CA, the master key, a first tenant and its admin certificate (idempotent)')
    .option('--tenant <id>', 'the first tenant', 'demo')
    .action(
      action(io, async (context, input) => {
        const { options } = parseCommandInput(BootstrapInput, input);
        const result = await bootstrap({
          dataDir: context.settings.dataDir,
          tenantId: options.tenant,
          ...(context.settings.databaseUrl ? { databaseUrl: context.settings.databaseUrl } : {}),
        });
        await context.print(result, () =>
          [
            `Tenant ${result.tenantId}: admin principal ${result.principalId}` +
              (result.created.tenant ? ' (new)' : ''),
            `Certificate ${result.serial}, valid until ${isoTime(result.notAfter)}` +
              (result.created.certificate ? ' (new)' : ' (reused)'),
            `  ${result.certFile}`,
            `  ${result.keyFile}`,
            `  ${result.caFile}`,
            `curl --cacert ${result.caFile} --cert ${result.certFile} --key ${result.keyFile} https://localhost:8443/databases`,
          ].join('\n'),
        );
      }),
    );
}
