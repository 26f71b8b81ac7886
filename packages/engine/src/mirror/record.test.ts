import fs from 'node:fs';
import path from 'node:path';
import { RookeryError } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WRITE_OPS } from '../storage/statements.js';
import {
  decodeOperations,
  encodeRecord,
  RECORD_HEADER_BYTES,
  readRecordHeader,
  verifyRecord,
} from './record.js';
import { scanSegment } from './segment-reader.js';

const ops = Object.values(WRITE_OPS);

/** Operations of real op codes with arbitrary parameters of every kind SQLite is given. */
const operationsArb = fc.array(
  fc.constantFrom(...ops).chain((op) =>
    fc
      .array(
        fc.oneof(
          fc.constant(null),
          fc.integer(),
          fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }),
          fc.double({ noNaN: true }),
          fc.string({ unit: 'grapheme' }),
          fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
        ),
        { minLength: op.params, maxLength: op.params },
      )
      .map((params) => ({ code: op.code, params })),
  ),
  { maxLength: 20 },
);

const flat = (list: { code: number; params: unknown[] }[]) => list.flatMap((op) => [op.code, op.params]);

describe('transaction records', () => {
  it('decode to the operations they were encoded from', () => {
    fc.assert(
      fc.property(operationsArb, fc.integer({ min: 1, max: 2 ** 40 }), (list, txid) => {
        const record = encodeRecord(txid, 1_795_000_000_000, 2, flat(list));
        const header = readRecordHeader(record, 0)!;
        expect(header).toMatchObject({ txid, committedAt: 1_795_000_000_000, schema: 2 });
        expect(header.payloadBytes).toBe(record.length - RECORD_HEADER_BYTES);
        expect(verifyRecord(record, 0, header)).toBe(true);
        const decoded = decodeOperations(record.subarray(RECORD_HEADER_BYTES));
        // -0 is stored as a double and comes back as -0; everything else round-trips exactly.
        expect(decoded).toEqual(list);
      }),
      { numRuns: 200 },
    );
  });

  it('hold text that is longer in UTF-8 than in UTF-16 units', () => {
    const text = `${'ż'.repeat(5000)}🐢${'€'.repeat(3000)}`;
    const record = encodeRecord(1, 1, 2, [8, ['k', text], 8, ['k2', text]]);
    expect(decodeOperations(record.subarray(RECORD_HEADER_BYTES))).toEqual([
      { code: 8, params: ['k', text] },
      { code: 8, params: ['k2', text] },
    ]);
  });

  it('are refused when cut short anywhere', () => {
    const record = encodeRecord(7, 1, 2, [
      1,
      [1, 'users/1', 'users/1', 'Users', 5, 0, null, null, null, 'x'.repeat(100)],
    ]);
    for (let length = 0; length < record.length; length++) {
      const cut = record.subarray(0, length);
      const header = readRecordHeader(cut, 0);
      expect(header !== null && verifyRecord(cut, 0, header), `cut at ${length}`).toBe(false);
    }
  });

  it('are refused when any byte changed', () => {
    const record = encodeRecord(9, 2, 2, [8, ['k', 'v'], 6, ['docs/Users', 3]]);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: record.length - 1 }),
        fc.integer({ min: 1, max: 255 }),
        (at, xor) => {
          const changed = Buffer.from(record);
          changed[at]! ^= xor;
          const header = readRecordHeader(changed, 0);
          expect(header !== null && verifyRecord(changed, 0, header)).toBe(false);
        },
      ),
    );
  });

  it('with an unknown operation are refused as corrupt, not guessed at', () => {
    const record = encodeRecord(3, 1, 2, [99, ['x']]);
    expect(() => decodeOperations(record.subarray(RECORD_HEADER_BYTES))).toThrow(RookeryError);
  });
});

describe('segments', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    tmp = makeTempDir('rookery-segment-');
  });
  afterEach(() => tmp.cleanup());

  const records = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) =>
      encodeRecord(from + i, 1000 + i, 2, [8, ['n', String(from + i)]]),
    );

  const scan = (file: string) => {
    const txids: number[] = [];
    const result = scanSegment(file, (r) => {
      txids.push(r.header.txid);
      return true;
    });
    return { txids, ...result };
  };

  it('yield every whole record and ignore a torn tail', () => {
    const file = path.join(tmp.dir, 'a.seg');
    const whole = Buffer.concat(records(1, 5));
    const torn = records(6, 1)[0]!;
    for (let cut = 0; cut < torn.length; cut++) {
      fs.writeFileSync(file, Buffer.concat([whole, torn.subarray(0, cut)]));
      const result = scan(file);
      expect(result.txids).toEqual([1, 2, 3, 4, 5]);
      expect(result.ignoredBytes).toBe(cut);
    }
  });

  it('stop at the first damaged record even when whole records follow it', () => {
    // After a power loss the disk may keep later pages of a write and lose earlier ones:
    // nothing after a damaged record can be trusted to be in order.
    const file = path.join(tmp.dir, 'b.seg');
    const [a, b, c] = records(1, 3);
    const damaged = Buffer.from(b!);
    damaged[damaged.length - 1]! ^= 0xff;
    fs.writeFileSync(file, Buffer.concat([a!, damaged, c!]));
    expect(scan(file).txids).toEqual([1]);
  });

  it('ignore zeroes where a write never landed', () => {
    const file = path.join(tmp.dir, 'c.seg');
    fs.writeFileSync(file, Buffer.concat([...records(1, 2), Buffer.alloc(4096)]));
    expect(scan(file)).toMatchObject({ txids: [1, 2], ignoredBytes: 4096 });
  });
});
