import type BetterSqlite3 from 'better-sqlite3';
import { WRITE_OPS } from '../storage/statements.js';
import { decodeOperations } from './record.js';

/**
 * Applies mirrored transactions to a copy of docs.db by running the statements they recorded, with
 * the same parameters, in the same order: the same SQL on the same state gives the same state.
 */
export class Replayer {
  private readonly statements = new Map<number, BetterSqlite3.Statement<unknown[]>>();

  constructor(sqlite: BetterSqlite3.Database) {
    for (const op of Object.values(WRITE_OPS)) this.statements.set(op.code, sqlite.prepare(op.sql));
  }

  /** Runs one transaction's operations (inside the caller's SQLite transaction). */
  apply(payload: Buffer): void {
    for (const { code, params } of decodeOperations(payload)) this.statements.get(code)!.run(...params);
  }
}
