// What the store's query files share: reading driver errors of both dialects,
// typed parameters for INSERT … SELECT, and the errors several tables raise.
import { RookeryError } from '@rookery/protocol';
import { sql } from 'kysely';
import { z } from 'zod';

export const Time = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

type Constraint = 'unique' | 'foreign-key' | null;

/**
 * Which constraint a driver error broke, for both drivers: better-sqlite3
 * reports SQLITE_CONSTRAINT_* codes, node-postgres the SQLSTATE.
 */
export function brokenConstraint(error: unknown): Constraint {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505') {
    return 'unique';
  }
  if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || code === '23503') return 'foreign-key';
  return null;
}

export const principalNotFound = (id: string) =>
  new RookeryError('PrincipalNotFound', `There is no principal "${id}" (it may have been deleted).`);

/** A stored row that no longer parses is a corrupt store, not a bad request. */
export function corrupt(what: string, key: string, error: unknown): RookeryError {
  const reason = error instanceof Error ? error.message : String(error);
  return new RookeryError(
    'InternalError',
    `The control store holds an unreadable ${what} (${key}): ${reason}`,
  );
}

/** A typed parameter for INSERT … SELECT, where PostgreSQL cannot infer it from the target column. */
export const text = (value: string) => sql<string>`cast(${value} as text)`;
export const bigint = (value: number) => sql<number>`cast(${value} as bigint)`;
export const nullableBigint = (value: number | null) => sql<number | null>`cast(${value} as bigint)`;
