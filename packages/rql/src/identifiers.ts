// What counts as an identifier and which words are keywords. The lexer and the
// formatter share these so that whatever the formatter prints bare, the lexer
// reads back as the same identifier.

const IDENTIFIER_START = /[\p{L}_]/u;
const IDENTIFIER_PART = /[\p{L}\p{Nd}_-]/u;
const PARAMETER_PART = /[\p{L}\p{Nd}_]/u;

function isAsciiLetter(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

function isAsciiDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/** A letter or `_` (an identifier may also start with `@`, handled by the lexer). `char` is one code point. */
export function isIdentifierStart(char: string): boolean {
  const code = char.charCodeAt(0);
  if (code < 0x80) return isAsciiLetter(code) || code === 0x5f;
  return IDENTIFIER_START.test(char);
}

/** Letters, decimal digits, `_` and `-` (RavenDB allows `-` inside identifiers: `Order-Lines`). */
export function isIdentifierPart(char: string): boolean {
  const code = char.charCodeAt(0);
  if (code < 0x80) return isAsciiLetter(code) || isAsciiDigit(code) || code === 0x5f || code === 0x2d;
  return IDENTIFIER_PART.test(char);
}

/** Letters, decimal digits and `_` after the `$` of a parameter. */
export function isParameterPart(char: string): boolean {
  const code = char.charCodeAt(0);
  if (code < 0x80) return isAsciiLetter(code) || isAsciiDigit(code) || code === 0x5f;
  return PARAMETER_PART.test(char);
}

const BARE_NAME = /^(?:[\p{L}_][\p{L}\p{Nd}_-]*|@[\p{L}\p{Nd}_-]+)$/u;
const BARE_PARAMETER = /^[\p{L}\p{Nd}_]+$/u;

/**
 * Words the grammar gives a meaning somewhere. The formatter quotes names spelled
 * like one of them (in any letter case) so they can never be misread.
 */
export const KEYWORDS: ReadonlySet<string> = new Set([
  'all',
  'and',
  'as',
  'asc',
  'ascending',
  'between',
  'by',
  'declare',
  'desc',
  'descending',
  'distinct',
  'false',
  'filter',
  'from',
  'group',
  'in',
  'include',
  'index',
  'limit',
  'load',
  'match',
  'not',
  'null',
  'offset',
  'or',
  'order',
  'select',
  'true',
  'update',
  'where',
  'with',
]);

/**
 * Words that start a clause. As in RavenDB, they cannot be the bare first segment
 * of a field path, a collection name or an alias (quote them: `'Order'`).
 */
export const CLAUSE_KEYWORDS: ReadonlySet<string> = new Set([
  'as',
  'filter',
  'group',
  'include',
  'limit',
  'load',
  'offset',
  'order',
  'select',
  'update',
  'where',
]);

export function isKeyword(word: string): boolean {
  return KEYWORDS.has(word.toLowerCase());
}

export function isClauseKeyword(word: string): boolean {
  return CLAUSE_KEYWORDS.has(word.toLowerCase());
}

/**
 * True when `name` can be printed without quotes: it lexes as one identifier and
 * is not a keyword. `@`-names (`@metadata`, `@all_docs`) only where `allowAt` is set.
 */
export function canPrintBare(name: string, allowAt: boolean): boolean {
  if (!BARE_NAME.test(name) || isKeyword(name)) return false;
  return allowAt || !name.startsWith('@');
}

/**
 * True when `name` can be the bare first name of a field inside call arguments
 * (`count(and)`). There a quoted name reads as a string value and `true`, `false`,
 * `null` as literals, so this is the only spelling that reads back as a field; the
 * parser refuses clause keywords there as everywhere.
 */
export function canPrintBareArgumentField(name: string): boolean {
  if (!BARE_NAME.test(name) || isClauseKeyword(name)) return false;
  return !ARGUMENT_LITERALS.has(name.toLowerCase());
}

const ARGUMENT_LITERALS: ReadonlySet<string> = new Set(['true', 'false', 'null']);

/** True when `name` can follow `$` in a parameter reference. */
export function isParameterName(name: string): boolean {
  return BARE_PARAMETER.test(name);
}
