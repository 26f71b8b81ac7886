// One PostgreSQL transaction shared by our statements and pg-boss's: pg-boss
// accepts a `db` per call, so a job and its row of details (or a claim's check
// and its outcome) commit together or not at all.
import type pg from 'pg';
import type PgBoss from 'pg-boss';

export interface Transaction {
  client: pg.PoolClient;
  /** Hands pg-boss calls this transaction's connection. */
  boss: { db: PgBoss.Db };
}

export async function withTransaction<T>(pool: pg.Pool, work: (tx: Transaction) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work({
      client,
      boss: { db: { executeSql: (text, values) => client.query(text, values) } },
    });
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: Error) => {
      // A connection that cannot even roll back is closed rather than reused.
      broken = rollbackError;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
