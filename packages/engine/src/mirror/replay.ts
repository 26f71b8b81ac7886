import type BetterSqlite3 from 'better-sqlite3';
import { WRITE_OPS } from '../storage/statements.js';
import { decodeOperations } from './record.js';

const SQL_BY_CODE = new Map<number, string>(Object.values(WRITE_OPS).map((op) => [op.code, op.sql]));

/**
 * Applies mirrored transactions to a copy of docs.db by running the statements they recorded, with
 * the same parameters, in the same order: the same SQL on the same state gives the same state.
 * Statements are prepared when a record first uses them, not all up front: a chain replays on the schema
 * its snapshot has, where the statements of later schemas (a column or table it lacks) cannot be
 * prepared, and its records never use them.
 */
export class Replayer {
  private readonly statements = new Map<number, BetterSqlite3.Statement<unknown[]>>();

  constructor(private readonly sqlite: BetterSqlite3.Database) {}

  /** Runs one transaction's operations (inside the caller's SQLite transaction). */
  apply(payload: Buffer): void {
    for (const { code, params } of decodeOperations(payload)) this.statement(code).run(...params);
  }

  private statement(code: number): BetterSqlite3.Statement<unknown[]> {
    let statement = this.statements.get(code);
    if (!statement) {
      // decodeOperations refused codes WRITE_OPS does not know.
      statement = this.sqlite.prepare(SQL_BY_CODE.get(code)!);
      this.statements.set(code, statement);
    }
    return statement;
  }
}
