import { type QueryParameters, RookeryError } from '@rookery/protocol';
import type { RqlQuery } from '@rookery/rql';
import { parseQueryText, RqlCompiler } from '../query/compile-rql.js';
import type { Predicate } from '../query/plan.js';

/** What a subscription reads: one collection (every document for null), filtered in memory. */
export interface SubscriptionQuery {
  collection: string | null;
  where: Predicate | null;
}

const SUPPORTED =
  'a subscription query is "from Collection [where …]" (or from @all_docs), with =, !=, <, <=, >, >=, ' +
  'between, in, all in, and, or, not, parentheses, startsWith(), endsWith(), exists(), id() and $parameters';

/** Clauses a subscription cannot have: it delivers whole documents in etag order. */
const CLAUSES: ReadonlyArray<[keyof RqlQuery, string]> = [
  ['groupBy', 'group by'],
  ['orderBy', 'order by (documents come in the order they were written)'],
  ['load', 'load'],
  ['select', 'select, facets and suggestions (a subscription delivers whole documents)'],
  ['include', 'include'],
  ['limit', 'limit'],
  ['offset', 'offset'],
];

/** Conditions that need an index (full text, spatial) or mean nothing without ranking. */
const CONDITIONS: Readonly<Record<string, string>> = {
  search: 'search()',
  spatial: 'spatial conditions',
  regex: 'regex()',
  boost: 'boost()',
};

/**
 * Parses and checks a subscription's query. Subscriptions read documents in etag order and evaluate the
 * `where` clause on each one in memory (see matches.ts), so anything that needs an index is refused with a
 * 400 `InvalidQuery` that says what subscriptions support. A collection that has no documents yet is fine.
 * `$name` references are resolved from `parameters` by the compiler queries use, so they mean what they
 * mean in a query (a list parameter spreads into `in (…)`, and is refused where one value is expected);
 * one that `parameters` lacks is a 400 `InvalidQuery` naming it.
 */
export function compileSubscriptionQuery(text: string, parameters: QueryParameters = {}): SubscriptionQuery {
  const ast = parseQueryText(text);
  if (ast.from.kind === 'index') {
    throw invalid(`from index is not supported: ${SUPPORTED}`);
  }
  for (const [clause, what] of CLAUSES) {
    if (ast[clause] !== undefined) throw invalid(`${what} is not supported: ${SUPPORTED}`);
  }
  if (ast.where) {
    for (const kind of kindsIn(ast.where)) {
      const what = CONDITIONS[kind];
      if (what) throw invalid(`${what} is not supported: ${SUPPORTED}`);
    }
  }
  const where = new RqlCompiler(ast, parameters).where();
  return { collection: ast.from.name === '@all_docs' ? null : ast.from.name, where };
}

/** Every node kind in a syntax tree. */
function* kindsIn(node: unknown): Generator<string> {
  if (Array.isArray(node)) {
    for (const item of node) yield* kindsIn(item);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const kind = (node as { kind?: unknown }).kind;
  if (typeof kind === 'string') yield kind;
  for (const [key, value] of Object.entries(node)) if (key !== 'position') yield* kindsIn(value);
}

function invalid(message: string): RookeryError {
  return new RookeryError('InvalidQuery', `Subscription query: ${message}`);
}
