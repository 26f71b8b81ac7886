// @rookery/rql: parse RavenDB Query Language text into a typed tree, and print it back.

export type * from './ast.js';
export { RqlSyntaxError } from './errors.js';
export { formatName, formatRql, quoteString } from './format.js';
export { MAX_IN_VALUES, MAX_NESTING_DEPTH, MAX_QUERY_LENGTH } from './limits.js';
export { parseRql } from './parser.js';
