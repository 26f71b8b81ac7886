import { describe, expect, it } from 'vitest';
import { prepareDocument } from './document-input.js';
import { RookeryError } from './errors.js';
import { MAX_JSON_DEPTH, nestingExceeds } from './json-depth.js';

/** `levels` objects nested (the outermost is level 1), built without recursion. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { Leaf: 1 };
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

describe('nestingExceeds', () => {
  it('counts the outermost object as level 1, and arrays as levels', () => {
    expect(nestingExceeds({ a: { b: [1] } }, 3)).toBe(false);
    expect(nestingExceeds({ a: { b: [1] } }, 2)).toBe(true);
    expect(nestingExceeds(1, 0)).toBe(false);
    expect(nestingExceeds(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(nestingExceeds(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
  });

  it('checks a value far deeper than the stack allows recursion', () => {
    expect(nestingExceeds(nested(200_000), MAX_JSON_DEPTH)).toBe(true);
  });
});

describe('prepareDocument', () => {
  it('refuses a document nested past the limit with 400 NestingTooDeep naming it, before serialising it', () => {
    let thrown: unknown;
    try {
      prepareDocument('deep/1', nested(5_000));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RookeryError);
    expect((thrown as RookeryError).code).toBe('NestingTooDeep');
    expect((thrown as RookeryError).status).toBe(400);
    expect((thrown as RookeryError).message).toMatch(/deep\/1.*256/);
    expect(prepareDocument('ok/1', nested(MAX_JSON_DEPTH)).bodyJson).toContain('Leaf');
  });
});
