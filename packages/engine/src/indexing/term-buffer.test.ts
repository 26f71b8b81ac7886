import BetterSqlite3 from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NULL_TERM, type TermValue } from './field-values.js';
import { TermBuffer } from './term-buffer.js';

type Row = [number, TermValue, number];

// Terms as the index writer produces them: small field ids, finite numbers, BMP strings, the null blob.
const termArb: fc.Arbitrary<TermValue> = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => n + 0), // no -0: SQLite keeps 0
  fc.integer({ min: -5, max: 5 }),
  fc.string({ maxLength: 6, unit: fc.constantFrom('a', 'b', 'B', 'é', '0', ' ') }),
  fc.constant(NULL_TERM),
);

describe('TermBuffer', () => {
  it('drains rows in the order SQLite keeps the terms table', () => {
    const db = new BetterSqlite3(':memory:');
    db.exec(
      'CREATE TABLE t (field INTEGER, value ANY, entry INTEGER, PRIMARY KEY (field, value, entry)) STRICT, WITHOUT ROWID',
    );
    const insert = db.prepare('INSERT OR IGNORE INTO t VALUES (?, ?, ?)');
    const ordered = db.prepare('SELECT field, value, entry FROM t ORDER BY field, value, entry').raw();
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 1, max: 4 }), termArb), { maxLength: 60 }), (pairs) => {
        db.exec('DELETE FROM t');
        const buffer = new TermBuffer();
        // Entries ascend as rows arrive, as when a batch writes its documents one after another.
        const rows: Row[] = pairs.map(([field, value], entry) => [field, value, entry]);
        for (const [field, value, entry] of rows) {
          buffer.add(field, value, entry);
          insert.run(field, value, entry);
        }
        expect(buffer.size).toBe(rows.length);
        const drained: Row[] = [];
        buffer.drain((field, value, entry) => drained.push([field, value, entry]));
        expect(drained).toEqual(ordered.all());
        expect(buffer.size).toBe(0);
      }),
    );
    db.close();
  });
});
