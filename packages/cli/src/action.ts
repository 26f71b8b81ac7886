// Glue between commander and the commands: every action gets a CliContext
// built from the global options, its positional arguments and its options,
// and the context is closed when it ends, so no command can leak an open store.
import type { Command } from 'commander';
import { CliContext } from './context.js';
import type { CommandInput } from './inputs.js';
import type { CliIo } from './output.js';
import { resolveSettings } from './settings.js';

export type CommandHandler = (context: CliContext, input: CommandInput) => Promise<void>;

/** Turns a handler into a commander action (which receives args…, options, command). */
export function action(io: CliIo, handler: CommandHandler) {
  return async (...received: unknown[]): Promise<void> => {
    const command = received.at(-1) as Command;
    const options = received.at(-2) as Record<string, unknown>;
    const args = received.slice(0, -2);
    const context = new CliContext(resolveSettings(command.optsWithGlobals(), io.env), io);
    try {
      await handler(context, { args, options });
    } finally {
      await context.close();
    }
  };
}

/** Collects a repeatable option (`--role a --role b`) into an array. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
