// How deeply JSON may nest. JSON.parse reads any depth without trouble, but much of what comes after is
// recursive: JSON.stringify (storing a document), structuredClone (patching one), zod, the index sandbox's
// copies. On Node 20 they overflow the stack somewhere between 2,000 and 10,000 levels, depending on what is
// already on the stack, and the RangeError that follows was a 500. A fixed limit far below that turns the
// same input into a clear 400, the same on every path.
import { RookeryError } from './errors.js';

/**
 * Deepest nesting of objects and arrays in a document, the document itself being level 1
 * (`{"a":{"b":[1]}}` is 3 deep). Generous next to what serialisers allow by default (System.Text.Json and
 * Json.NET, which RavenDB's .NET client uses: 64; MongoDB stores at most 100 levels) and far below the
 * depths where the recursive code above overflows. Not configurable: what it protects is the stack, which
 * configuration does not change.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * Levels a request body may add around a document (`{"Commands":[{"Document":{…}}]}` adds three): request
 * bodies may nest this much deeper than a document, so a document at the limit is refused by the document
 * check, which names the document, rather than by the body check.
 */
export const REQUEST_ENVELOPE_DEPTH = 8;

/**
 * True when `value` nests objects and arrays more than `max` levels deep. Iterative, so any depth is safe
 * to check; it stops at the first level past `max`. A 1 KB document takes well under a microsecond.
 */
export function nestingExceeds(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const pending: unknown[] = [value];
  const depths: number[] = [1];
  while (pending.length > 0) {
    const node = pending.pop() as object;
    const depth = depths.pop()!;
    if (depth > max) return true;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) {
        pending.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/** Throws 400 `NestingTooDeep` when `value` nests deeper than `max`; `what` names it in the message. */
export function assertNestingWithin(value: unknown, max: number, what: string): void {
  if (!nestingExceeds(value, max)) return;
  throw new RookeryError(
    'NestingTooDeep',
    `${what} nests objects and arrays more than ${max} levels deep; flatten it (a document may nest at most ${MAX_JSON_DEPTH} levels)`,
    { limitDepth: max },
  );
}
