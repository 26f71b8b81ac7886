// The plan a query answers with (`QueryPlanNode`, shown by `explain` and the console's plan tree).
import type { QueryPlanNode } from '@rookery/protocol';
import type { MatchPlan } from './cost-model.js';
import type { Predicate } from './plan.js';

/** The match half of a query's plan: the bitmaps it combined, or the scan and the test of each candidate. */
export function describeMatch(where: Predicate | null, plan: MatchPlan): QueryPlanNode {
  if (plan.set && where) {
    return {
      Operation: 'Match',
      Details: `bitmaps of each term and full-text match, combined: ${plan.set.size} entries`,
      Children: [describe(where)],
    };
  }
  const { driver, residual } = plan;
  return {
    Operation: 'Match',
    Details: residual ? 'scan, then test each candidate' : 'scan',
    Children: [driver.describe, ...(residual ? [describe(residual)] : [])],
  };
}

export function describe(predicate: Predicate): QueryPlanNode {
  switch (predicate.kind) {
    case 'and':
    case 'or':
      return { Operation: predicate.kind.toUpperCase(), Children: predicate.children.map(describe) };
    case 'not':
      return { Operation: 'NOT', Children: [describe(predicate.child)] };
    case 'true':
      return { Operation: 'All' };
    case 'compare':
      return {
        Operation: 'Test',
        Details: `${predicate.field} ${predicate.op} ${JSON.stringify(predicate.value)}`,
      };
    case 'between':
      return {
        Operation: 'Test',
        Details: `${predicate.field} between ${JSON.stringify(predicate.low)} and ${JSON.stringify(predicate.high)}`,
      };
    case 'in':
      return {
        Operation: 'Test',
        Details: `${predicate.field} ${predicate.all ? 'all in' : 'in'} (${predicate.values.length} values)`,
      };
    case 'search':
      return { Operation: 'Test', Details: `search(${predicate.field}, ${JSON.stringify(predicate.terms)})` };
    case 'within':
      return { Operation: 'Test', Details: `${predicate.field} within ${predicate.radiusKm} km` };
    default:
      return { Operation: 'Test', Details: `${predicate.kind}(${predicate.field})` };
  }
}
