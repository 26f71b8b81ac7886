// Spelling names in RQL the way @rookery/rql reads them back: bare when they lex as one identifier and
// are not a keyword, single-quoted otherwise. Values never go through here: they travel as $parameters.
import { clientError } from '../errors.js';

const BARE_NAME = /^(?:[\p{L}_][\p{L}\p{Nd}_-]*|@[\p{L}\p{Nd}_-]+)$/u;

/** Words RQL gives a meaning somewhere; a name spelled like one (any case) is quoted. */
const KEYWORDS: ReadonlySet<string> = new Set([
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

/** A string literal: single quotes, with `\`, `'` and line breaks escaped. */
export function quoteString(text: string): string {
  const escaped = text.replace(/[\\'\n\r\t]/g, (char) => {
    if (char === '\n') return '\\n';
    if (char === '\r') return '\\r';
    if (char === '\t') return '\\t';
    return `\\${char}`;
  });
  return `'${escaped}'`;
}

/** A collection name or alias. */
export function formatName(name: string): string {
  return BARE_NAME.test(name) && !KEYWORDS.has(name.toLowerCase()) ? name : quoteString(name);
}

/**
 * A field path as callers write it: `Name`, `Address.City`, `Lines[].Product`, `@metadata.@collection`,
 * `id()`. Each dot-separated segment is quoted when it has to be (`'First Name'`).
 */
export function formatField(path: string): string {
  if (path.trim() === '') throw clientError('InvalidArgument', 'a field name cannot be empty');
  if (path === 'id()') return path;
  return path
    .split('.')
    .map((segment) => {
      const array = segment.endsWith('[]');
      const name = array ? segment.slice(0, -2) : segment;
      if (name === '') throw clientError('InvalidArgument', `the field "${path}" has an empty segment`);
      return formatName(name) + (array ? '[]' : '');
    })
    .join('.');
}
