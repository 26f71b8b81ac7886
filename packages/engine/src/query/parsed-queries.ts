// Parsed RQL by its text. A database's queries are a few shapes asked again and again (the listing pages,
// the popular searches, each with the same text and different parameters or none), and parsing them was
// 6.6% of a tenant's CPU in the NuGet load test without think time (docs/benchmarks.md). Every caller of a
// text shares one tree, so the trees are frozen: a compiler that wrote into one would throw, not corrupt
// the next query's.
import type { RqlQuery } from '@rookery/rql';
import { parseQueryText } from './compile-rql.js';

/** Texts kept, least recently used first out; a text longer than MAX_TEXT is parsed every time. */
const MAX_ENTRIES = 1_024;
const MAX_TEXT = 4_096;

const parsed = new Map<string, RqlQuery>();

/** `parseQueryText(text)`, from the recent texts when it was parsed before; a syntax error is never kept. */
export function parsedQuery(text: string): RqlQuery {
  if (text.length > MAX_TEXT) return parseQueryText(text);
  const known = parsed.get(text);
  if (known !== undefined) {
    // Map order is insertion order: re-inserting makes it the most recently used.
    parsed.delete(text);
    parsed.set(text, known);
    return known;
  }
  const ast = deepFreeze(parseQueryText(text));
  if (parsed.size >= MAX_ENTRIES) {
    const oldest = parsed.keys().next().value;
    if (oldest !== undefined) parsed.delete(oldest);
  }
  parsed.set(text, ast);
  return ast;
}

function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  for (const child of Object.values(value)) deepFreeze(child);
  return Object.freeze(value);
}
