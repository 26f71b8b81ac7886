import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ChunkedInsert } from './chunked-insert.js';
import { NULL_TERM } from './field-values.js';

function table() {
  const db = new BetterSqlite3(':memory:');
  db.exec('CREATE TABLE t (a INTEGER, b ANY, c INTEGER, PRIMARY KEY (a, b)) STRICT, WITHOUT ROWID');
  return db;
}

describe('ChunkedInsert', () => {
  it.each([0, 1, 63, 64, 65, 200])(
    'writes all of %i rows: full statements, then the rest one by one',
    (n) => {
      const db = table();
      const insert = new ChunkedInsert(db, 'INSERT INTO t (a, b, c) VALUES $rows');
      for (let i = 0; i < n; i++) insert.add(i % 3, i % 2 === 0 ? i : `v${i}`, i);
      insert.flush();
      const rows = db.prepare('SELECT a, b, c FROM t ORDER BY c').all();
      expect(rows).toEqual(
        Array.from({ length: n }, (_, i) => ({ a: i % 3, b: i % 2 === 0 ? i : `v${i}`, c: i })),
      );
    },
  );

  it('takes an upsert clause after the rows, and the null term', () => {
    const db = table();
    const add = new ChunkedInsert(
      db,
      'INSERT INTO t (a, b, c) VALUES $rows ON CONFLICT (a, b) DO UPDATE SET c = c + excluded.c',
    );
    for (let i = 0; i < 100; i++) add.add(1, i % 2 === 0 ? NULL_TERM : 'x', 1);
    add.flush();
    expect(db.prepare('SELECT typeof(b) AS type, c FROM t ORDER BY type').all()).toEqual([
      { type: 'blob', c: 50 },
      { type: 'text', c: 50 },
    ]);
  });

  it('forgets pending rows on discard', () => {
    const db = table();
    const insert = new ChunkedInsert(db, 'INSERT INTO t (a, b, c) VALUES $rows');
    insert.add(1, 'a', 1);
    insert.discard();
    insert.add(2, 'b', 2);
    insert.flush();
    expect(db.prepare('SELECT a FROM t').pluck().all()).toEqual([2]);
  });
});
