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
    // Runs: 0 = {2, 4}, 1 = {1, 4}, 2 = {3}. Entry 0 has no term in the field.
    const order = FieldOrder.fromRuns('4,2;1,4;3');
    expect([...order.runOfEntries(false)]).toEqual([-1, 1, 0, 2, 0]);
    expect([...order.runOfEntries(true)]).toEqual([-1, 1, 0, 2, 1]);
  });

  it('is empty for no terms', () => {
    for (const list of [null, '']) {
      const order = FieldOrder.fromRuns(list);
      expect(order.length).toBe(0);
      expect([...order.runStarts]).toEqual([0]);
    }
  });
});
