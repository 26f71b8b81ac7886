import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountArg, RoleArgs, SizeArg, TimeArg } from './inputs.js';
import { formatBytes, formatTable } from './output.js';

describe('command-line values', () => {
  it('reads sizes in binary units, and formatBytes reads back as the same number', () => {
    expect(SizeArg.parse('10GiB')).toBe(10 * 2 ** 30);
    expect(SizeArg.parse('512 mib')).toBe(512 * 2 ** 20);
    expect(SizeArg.parse('1234')).toBe(1234);
    expect(SizeArg.safeParse('10GB').success).toBe(false);
    expect(SizeArg.safeParse('-1').success).toBe(false);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 }), (bytes) => {
        expect(SizeArg.parse(formatBytes(bytes).replace(' ', ''))).toBe(bytes);
      }),
    );
  });

  it('reads counts, times and roles', () => {
    expect(CountArg.parse('42')).toBe(42);
    expect(CountArg.safeParse('4.2').success).toBe(false);
    expect(TimeArg.parse('1700000000000')).toBe(1_700_000_000_000);
    expect(TimeArg.parse('2025-01-31T12:00:00Z')).toBe(Date.UTC(2025, 0, 31, 12));
    expect(TimeArg.safeParse('soon').success).toBe(false);
    expect(RoleArgs.parse(['tenant-admin'])).toEqual({ kind: 'tenant-admin' });
    expect(RoleArgs.parse(['operator'])).toEqual({ kind: 'operator' });
    expect(RoleArgs.parse(['db:shop=read-only', 'db:orders=read-write'])).toEqual({
      kind: 'database',
      access: { shop: 'read-only', orders: 'read-write' },
    });
    expect(RoleArgs.safeParse(['db:=read-only']).success).toBe(false);
    expect(RoleArgs.safeParse(['operator', 'tenant-admin']).success).toBe(false);
    expect(RoleArgs.safeParse([]).success).toBe(false);
  });

  it('aligns tables: text to the left, numbers to the right', () => {
    expect(
      formatTable(
        ['NAME', 'N'],
        [
          ['a', 5],
          ['bbb', 123],
        ],
      ),
    ).toBe('NAME    N\na       5\nbbb   123');
  });
});
