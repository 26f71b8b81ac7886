// rookery totp enrol|reset — authenticators for people. Enrolment prints the
// otpauth URI and a QR code to scan in the terminal; the secret itself is
// stored only sealed under the master key.
import { enrolTotp, resetTotp } from '@rookery/control-store';
import type { Command } from 'commander';
import { z } from 'zod';
import { action } from '../action.js';
import { parseCommandInput } from '../inputs.js';
import type { CliIo } from '../output.js';
import { terminalQrCode } from '../qr.js';

const EnrolInput = z.object({ args: z.tuple([z.string().min(1)]), options: z.object({ qr: z.boolean() }) });
const ResetInput = z.object({ args: z.tuple([z.string().min(1)]), options: z.object({}) });

export function registerTotpCommands(program: Command, io: CliIo): void {
  const totp = program.command('totp').description("people's authenticators (TOTP): enrol, reset");

  totp
    .command('enrol')
    .alias('enroll')
    .description('give a person an authenticator secret: prints the otpauth URI and a QR code to scan')
    .argument('<principal>', 'a person, by the id shown by principal list')
    .option('--no-qr', 'print the URI only')
    .action(
      action(io, async (context, input) => {
        const { args, options } = parseCommandInput(EnrolInput, input, ['principal']);
        const { principal, secret, uri } = await enrolTotp(await context.store(), await context.masterKey(), {
          principalId: args[0],
        });
        await context.print({ principalId: principal.id, uri, secret }, async () =>
          [
            `Authenticator for "${principal.name}". Scan the code, or add ${uri}`,
            `(secret to type in by hand: ${secret})`,
            ...(options.qr ? ['', await terminalQrCode(uri)] : []),
            'Then open a session with a current code: POST /auth/2fa {"code": "123456"}.',
          ].join('\n'),
        );
      }),
    );

  totp
    .command('reset')
    .description("remove a person's authenticator and end their two-factor sessions")
    .argument('<principal>')
    .action(
      action(io, async (context, input) => {
        const [principalId] = parseCommandInput(ResetInput, input, ['principal']).args;
        const { principal, hadAuthenticator } = await resetTotp(await context.store(), { principalId });
        await context.print({ principalId: principal.id, hadAuthenticator }, () =>
          hadAuthenticator
            ? `Removed the authenticator of "${principal.name}" and ended their sessions; enrol again with rookery totp enrol ${principal.id}.`
            : `"${principal.name}" had no authenticator; their sessions are ended.`,
        );
      }),
    );
}
