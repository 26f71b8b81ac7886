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
  it('drains each field in the order SQLite keeps the terms table', () => {
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
        // Entries ascend as rows arrive, as when a batch's entries are built one after another.
        const rows: Row[] = pairs.map(([field, value], entry) => [field, value, entry]);
        for (const [field, value, entry] of rows) {
          buffer.add(`f${field}`, Buffer.isBuffer(value) ? null : value, entry);
          insert.run(field, value, entry);
        }
        const drained: Row[] = buffer
          .drain()
          .sort((a, b) => a.field.localeCompare(b.field))
          .flatMap((t) => {
            const field = Number(t.field.slice(1));
            return [
              ...[...t.numbers].map((value, i): Row => [field, value, t.numberEntries[i]!]),
              ...t.strings.map((value, i): Row => [field, value, t.stringEntries[i]!]),
              ...[...t.nullEntries].map((entry): Row => [field, NULL_TERM, entry]),
            ];
          });
        expect(drained).toEqual(ordered.all());
        expect(buffer.drain()).toEqual([]);
      }),
    );
    db.close();
  });
});
