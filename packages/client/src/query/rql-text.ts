// Spelling names in RQL the way @rookery/rql reads them back (its own printer decides: bare when they lex
// as one identifier and are not a keyword, single-quoted otherwise). Values never go through here: they
// travel as $parameters.
import { formatName as formatRqlName } from '@rookery/rql';
import { clientError } from '../errors.js';

export { quoteString } from '@rookery/rql';

/** A collection name, alias or path segment: `@`-names (`@metadata`, `@all_docs`) stay bare. */
export function formatName(name: string): string {
  return formatRqlName(name, true);
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
