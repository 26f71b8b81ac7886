import type { DeclarativeMap, FieldSource, IndexDefinition } from '@rookery/protocol';
import { ID_FIELD } from './compile-rql.js';

export interface IndexNeeds {
  collection: string;
  fields: ReadonlySet<string>;
  searched: ReadonlySet<string>;
  spatial: ReadonlyMap<string, { Lat: string; Lng: string }>;
}

export type AutoIndexChoice =
  | { kind: 'use'; name: string }
  | { kind: 'create'; definition: IndexDefinition; supersedes: string | null };

const AUTO_PREFIX = 'Auto/';

/**
 * Picks the automatic index that answers a collection query, or designs a
 * new one: the union of the fields of the collection's widest automatic
 * index and the fields this query needs (RavenDB's "extend, then retire the
 * old one"), so indexes converge instead of multiplying.
 */
export function chooseAutoIndex(needs: IndexNeeds, existing: readonly IndexDefinition[]): AutoIndexChoice {
  const mine = existing
    .filter((d) => d.Name.toLowerCase().startsWith(`${AUTO_PREFIX}${needs.collection}/`.toLowerCase()))
    .filter((d) => d.Reduce === undefined)
    .map((d) => ({ definition: d, map: (d.Maps as DeclarativeMap[])[0] }))
    .filter((d): d is { definition: IndexDefinition; map: DeclarativeMap } => d.map !== undefined);
  const covering = mine.find(({ definition, map }) => covers(definition, map, needs));
  if (covering) return { kind: 'use', name: covering.definition.Name };

  const widest = mine.sort((a, b) => Object.keys(b.map.Fields).length - Object.keys(a.map.Fields).length)[0];
  const fields: Record<string, FieldSource> = { ...(widest?.map.Fields ?? {}) };
  const searched = new Set(
    Object.entries(widest?.definition.Fields ?? {})
      .filter(([, o]) => o.Indexing === 'Search')
      .map(([name]) => name),
  );
  for (const name of needs.fields) fields[name] = sourceOf(name, needs);
  for (const name of needs.searched) searched.add(name);
  const names = Object.keys(fields).sort();
  const label = names.map((n) => (searched.has(n) ? `search(${n})` : n)).join('And');
  const definition: IndexDefinition = {
    Name: `${AUTO_PREFIX}${needs.collection}/By${label}`,
    Maps: [{ Collection: needs.collection, Fields: Object.fromEntries(names.map((n) => [n, fields[n]!])) }],
    ...(searched.size > 0
      ? { Fields: Object.fromEntries([...searched].sort().map((n) => [n, { Indexing: 'Search' as const }])) }
      : {}),
  };
  return { kind: 'create', definition, supersedes: widest?.definition.Name ?? null };
}

function covers(definition: IndexDefinition, map: DeclarativeMap, needs: IndexNeeds): boolean {
  for (const field of needs.fields) if (!Object.hasOwn(map.Fields, field)) return false;
  for (const field of needs.searched) if (definition.Fields?.[field]?.Indexing !== 'Search') return false;
  return true;
}

function sourceOf(name: string, needs: IndexNeeds): FieldSource {
  if (name === ID_FIELD) return 'id()';
  return needs.spatial.get(name) ?? name;
}
