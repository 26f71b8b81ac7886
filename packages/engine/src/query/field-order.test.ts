import { describe, expect, it } from 'vitest';
import { FieldOrder } from './field-order.js';

describe('FieldOrder.fromRuns', () => {
  it('reads entries in run order, sorting each run, and where each run starts', () => {
    const order = FieldOrder.fromRuns('4,2,9;1;7,3');
    expect([...order.entries]).toEqual([2, 4, 9, 1, 3, 7]);
    expect([...order.runStarts]).toEqual([0, 3, 4, 6]);
    expect(order.length).toBe(6);
  });

  it('gives each entry the run of its least and of its greatest value, -1 for none', () => {
    // Runs: 0 = {2, 4}, 1 = {1, 4}, 2 = {3, 5}. Entry 0 has no term in the field; 4 has two values, and
    // entries first met after it (1, 3, 5) still get their greatest run.
    const order = FieldOrder.fromRuns('4,2;1,4;3,5');
    expect([...order.runOfEntries(false)]).toEqual([-1, 1, 0, 2, 0, 2]);
    expect([...order.runOfEntries(true)]).toEqual([-1, 1, 0, 2, 1, 2]);
  });

  it('holds one per-entry array when every entry has one value', () => {
    const single = FieldOrder.fromRuns('3,1;2');
    expect(single.runOfEntries(true)).toBe(single.runOfEntries(false));
    expect(single.bytes).toBe(3 * 4 + 3 * 4 + 4 * 4);
    expect(FieldOrder.bytesAtLeast(3, 3)).toBe(single.bytes - 3 * 4);
  });

  it('is empty for no terms', () => {
    for (const list of [null, '']) {
      const order = FieldOrder.fromRuns(list);
      expect(order.length).toBe(0);
      expect([...order.runStarts]).toEqual([0]);
    }
  });
});
