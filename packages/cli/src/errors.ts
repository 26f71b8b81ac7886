// What the CLI says when something fails: the stable code first (scripts match
// on it), then the message that tells the person what to do. Rookery's and the
// CA's errors carry both already; anything else is a defect or the
// environment (a PostgreSQL server down, a disk full) and says so.
import { isPkiError } from '@rookery/pki';
import { isRookeryError } from '@rookery/protocol';
import { CommanderError } from 'commander';

export interface CliFailure {
  code: string;
  message: string;
}

export function describeFailure(error: unknown): CliFailure {
  if (isRookeryError(error) || isPkiError(error)) return { code: error.code, message: error.message };
  if (error instanceof CommanderError) {
    // Commander's messages start with "error: "; the code says that already.
    return { code: 'InvalidRequest', message: error.message.replace(/^error:\s*/i, '') };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'InternalError', message };
}
