// The `rookery` command: builds the commander program and runs one command
// line. Every failure ends here and is printed the same way: the stable error
// code, then the message (or, with --json, {"error": {code, message}} on
// stderr), with exit status 1.
import { Command, CommanderError } from 'commander';
import { registerBootstrapCommand } from './commands/bootstrap.js';
import { registerCertCommands } from './commands/cert.js';
import { registerDatabaseCommands } from './commands/database.js';
import { registerHostCommands } from './commands/host.js';
import { registerPrincipalCommands } from './commands/principal.js';
import { registerTenantCommands } from './commands/tenant.js';
import { registerTotpCommands } from './commands/totp.js';
import { registerUsageCommand } from './commands/usage.js';
import { describeFailure } from './errors.js';
import type { CliIo } from './output.js';

export function buildProgram(io: CliIo): Command {
  const program = new Command('rookery')
    .description(
      "Rookery's admin command: tenants, databases, principals, certificates, TOTP, usage and the fleet's hosts",
    )
    .option(
      '--data <dir>',
      'data directory of the embedded deployment (default: $ROOKERY_DATA or <repo>/.rookery/data)',
    )
    .option(
      '--database-url <url>',
      'PostgreSQL control store (default: $ROOKERY_CONTROL_DATABASE_URL; SQLite otherwise)',
    )
    .option('--json', 'print JSON for scripts')
    .showSuggestionAfterError()
    // Failures are thrown to runCli, which prints them in one format; help still goes to stdout.
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: () => undefined,
    });
  registerTenantCommands(program, io);
  registerDatabaseCommands(program, io);
  registerPrincipalCommands(program, io);
  registerCertCommands(program, io);
  registerTotpCommands(program, io);
  registerUsageCommand(program, io);
  registerHostCommands(program, io);
  registerBootstrapCommand(program, io);
  return program;
}

const processIo: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env };

/** Runs one command line (without `node` and the script); answers the exit status. */
export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  try {
    await buildProgram(io).parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    // --help, --version, and help shown for a bare group (`rookery tenant`) are not failures.
    if (error instanceof CommanderError && (error.exitCode === 0 || error.code === 'commander.help')) {
      return error.exitCode;
    }
    const { code, message } = describeFailure(error);
    const json = argv.includes('--json');
    io.stderr.write(json ? `${JSON.stringify({ error: { code, message } })}\n` : `${code}: ${message}\n`);
    return 1;
  }
}
