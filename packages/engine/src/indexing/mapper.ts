import type {
  Aggregate,
  DeclarativeMap,
  DeclarativeReduce,
  FieldSource,
  IndexDefinition,
} from '@rookery/protocol';
import { valuesAt } from './field-values.js';
import { compileJsIndex, type MapOutcome, type SandboxLimits } from './sandbox/index.js';

export type IndexEntry = Record<string, unknown>;
export type { MapOutcome };

/**
 * What turns documents into index entries, whether the definition is
 * declarative or JavaScript: the indexer only sees this.
 */
export interface Mapper {
  /** Collections the maps read, or null for every document (`@all_docs`). */
  readonly collections: readonly string[] | null;
  readonly hasReduce: boolean;
  /** One outcome per doc; with `deadline` (JavaScript only) possibly for a prefix only (see JsIndexProgram.map). */
  map(collection: string, docs: readonly Record<string, unknown>[], deadline?: number): MapOutcome[];
  reduceKeys(entries: readonly IndexEntry[]): string[];
  reduce(groups: readonly (readonly IndexEntry[])[]): IndexEntry[];
  dispose(): void;
}

export function createMapper(definition: IndexDefinition, limits?: Partial<SandboxLimits>): Mapper {
  const [first] = definition.Maps;
  if (typeof first === 'string') {
    const program = compileJsIndex(
      {
        maps: definition.Maps as string[],
        reduce: typeof definition.Reduce === 'string' ? definition.Reduce : undefined,
      },
      limits,
    );
    const collections = program.collections.includes('@all_docs') ? null : program.collections;
    return {
      collections,
      hasReduce: program.hasReduce,
      map: (collection, docs, deadline) => program.map(collection, docs, deadline),
      reduceKeys: (entries) => program.reduceKeys(entries),
      reduce: (groups) => program.reduce(groups),
      dispose: () => program.dispose(),
    };
  }
  return declarativeMapper(
    definition.Maps as DeclarativeMap[],
    typeof definition.Reduce === 'object' ? definition.Reduce : undefined,
  );
}

function declarativeMapper(maps: readonly DeclarativeMap[], reduce: DeclarativeReduce | undefined): Mapper {
  const names = maps.map((m) => m.Collection);
  const collections = names.some((c) => c === '@all_docs')
    ? null
    : [...new Map(names.map((c) => [c.toLowerCase(), c])).values()];
  return {
    collections,
    hasReduce: reduce !== undefined,
    map(collection, docs) {
      const mine = maps.filter(
        (m) => m.Collection === '@all_docs' || m.Collection.toLowerCase() === collection.toLowerCase(),
      );
      return docs.map((doc): MapOutcome => {
        try {
          return { ok: true, entries: mine.map((m) => entryOf(doc, m.Fields)) };
        } catch (error) {
          return { ok: false, error: (error as Error).message };
        }
      });
    },
    reduceKeys(entries) {
      if (!reduce) throw new Error('not a map/reduce index');
      return entries.map((e) => JSON.stringify(reduce.GroupBy.map((f) => e[f] ?? null)));
    },
    reduce(groups) {
      if (!reduce) throw new Error('not a map/reduce index');
      return groups.map((group) => reduceGroup(reduce, group));
    },
    dispose() {},
  };
}

function entryOf(doc: Record<string, unknown>, fields: Record<string, FieldSource>): IndexEntry {
  const entry: IndexEntry = {};
  for (const [name, source] of Object.entries(fields)) {
    if (typeof source === 'string') {
      const values = valuesAt(doc, source);
      entry[name] = values.length === 1 ? (values[0] ?? null) : values;
    } else if (Array.isArray(source)) {
      entry[name] = source.flatMap((p) => valuesAt(doc, p)).filter((v) => v !== undefined && v !== null);
    } else {
      const [lat] = valuesAt(doc, source.Lat);
      const [lng] = valuesAt(doc, source.Lng);
      entry[name] =
        typeof lat === 'number' && typeof lng === 'number' ? { '@spatial': true, lat, lng } : null;
    }
  }
  return entry;
}

function reduceGroup(reduce: DeclarativeReduce, group: readonly IndexEntry[]): IndexEntry {
  const [head] = group;
  const result: IndexEntry = {};
  for (const field of reduce.GroupBy) result[field] = head?.[field] ?? null;
  for (const [name, aggregate] of Object.entries(reduce.Aggregate)) {
    result[name] = aggregateOf(aggregate, group);
  }
  return result;
}

function scalarsOf(group: readonly IndexEntry[], field: string): unknown[] {
  const values: unknown[] = [];
  for (const entry of group) {
    const value = entry[field];
    if (Array.isArray(value)) values.push(...value);
    else if (value !== undefined && value !== null) values.push(value);
  }
  return values;
}

function compare(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

function aggregateOf(aggregate: Aggregate, group: readonly IndexEntry[]): unknown {
  if ('Count' in aggregate) return group.length;
  if ('Sum' in aggregate) {
    let sum = 0;
    for (const v of scalarsOf(group, aggregate.Sum)) if (typeof v === 'number') sum += v;
    return sum;
  }
  if ('Min' in aggregate || 'Max' in aggregate) {
    const field = 'Min' in aggregate ? aggregate.Min : aggregate.Max;
    const sign = 'Min' in aggregate ? 1 : -1;
    let best: unknown = null;
    for (const v of scalarsOf(group, field)) if (best === null || sign * compare(v, best) < 0) best = v;
    return best;
  }
  if ('First' in aggregate) return scalarsOf(group, aggregate.First)[0] ?? null;
  return [...new Set(scalarsOf(group, aggregate.Distinct))];
}
