import {
  compareTerms,
  NULL_TERM,
  TEXT_LOWER_BOUND,
  type TermValue,
  termOf,
  valuesAt,
} from '../indexing/field-values.js';
import { ID_FIELD } from '../query/compile-rql.js';
import type { Predicate, Scalar } from '../query/plan.js';

/**
 * Evaluates a compiled `where` clause on one document in memory, with the semantics of a query through an
 * automatic index (sql-predicate.ts), so a subscription and a query with the same `where` agree:
 * every value at a path is a term (arrays are flattened, a missing value is null), strings compare without
 * regard to case, booleans as 'true'/'false', a comparison matches when any term matches, `!=` is "not =",
 * and terms order as SQLite orders them: numbers < text < null, with `<`/`>` never crossing kinds.
 * `$name` references arrive resolved: the predicate was compiled with the subscription's parameters by the
 * compiler queries use (query.ts), so a value given as a parameter compares exactly as if written inline.
 */
export function matches(predicate: Predicate, doc: Record<string, unknown>): boolean {
  switch (predicate.kind) {
    case 'true':
      return true;
    case 'and':
      return predicate.children.every((child) => matches(child, doc));
    case 'or':
      return predicate.children.some((child) => matches(child, doc));
    case 'not':
      return !matches(predicate.child, doc);
    case 'compare': {
      const value = term(predicate.value);
      const terms = termsAt(doc, predicate.field);
      const op = predicate.op;
      if (op === '=') return terms.some((t) => compareTerms(t, value) === 0);
      if (op === '!=') return !terms.some((t) => compareTerms(t, value) === 0);
      return terms.some((t) => inRange(t, op, value));
    }
    case 'between': {
      const low = term(predicate.low);
      const high = term(predicate.high);
      return termsAt(doc, predicate.field).some(
        (t) => compareTerms(t, low) >= 0 && compareTerms(t, high) <= 0,
      );
    }
    case 'in': {
      const terms = termsAt(doc, predicate.field);
      const has = (value: TermValue) => terms.some((t) => compareTerms(t, value) === 0);
      const wanted = predicate.values.map(term);
      return predicate.all ? wanted.every(has) : wanted.some(has);
    }
    case 'startsWith': {
      const prefix = predicate.value.toLowerCase();
      return termsAt(doc, predicate.field).some((t) => typeof t === 'string' && t.startsWith(prefix));
    }
    case 'endsWith': {
      const suffix = predicate.value.toLowerCase();
      return termsAt(doc, predicate.field).some((t) => typeof t === 'string' && t.endsWith(suffix));
    }
    case 'exists':
      return termsAt(doc, predicate.field).some((t) => compareTerms(t, NULL_TERM) < 0);
    case 'search':
    case 'within':
      // compileSubscriptionQuery refuses these: they need an index.
      throw new Error(`${predicate.kind} cannot be evaluated in memory`);
  }
}

/** The terms an automatic index would hold for `field` (its fields are never exact: text is lower-cased). */
function termsAt(doc: Record<string, unknown>, field: string): TermValue[] {
  const terms: TermValue[] = [];
  for (const value of valuesAt(doc, field === ID_FIELD ? 'id()' : field)) {
    const t = termOf(value, false);
    // Values an index leaves out (non-finite numbers) match nothing, not even null.
    if (t !== undefined) terms.push(t);
  }
  return terms;
}

function term(value: Scalar): TermValue {
  return termOf(value, false) ?? NULL_TERM;
}

/**
 * `<`, `<=`, `>`, `>=` as sql-predicate.ts's `comparison` bounds them: a number is compared with numbers
 * only, text with text only (`Age > 30` does not match names, `Name < 'm'` does not match numbers).
 */
function inRange(t: TermValue, op: '<' | '<=' | '>' | '>=', value: TermValue): boolean {
  const c = compareTerms(t, value);
  const numeric = typeof value === 'number';
  switch (op) {
    case '>':
    case '>=':
      return (op === '>' ? c > 0 : c >= 0) && compareTerms(t, numeric ? TEXT_LOWER_BOUND : NULL_TERM) < 0;
    case '<':
    case '<=':
      return (op === '<' ? c < 0 : c <= 0) && (numeric || compareTerms(t, TEXT_LOWER_BOUND) >= 0);
  }
}
