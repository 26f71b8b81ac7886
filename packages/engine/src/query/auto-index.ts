import { createHash } from 'node:crypto';
import {
  type DeclarativeMap,
  FieldNameSchema,
  type FieldSource,
  type IndexDefinition,
  IndexDefinitionSchema,
  IndexNameSchema,
  RookeryError,
} from '@rookery/protocol';
import { ID_FIELD } from './compile-rql.js';

/**
 * Fields one automatic index may have. RavenDB sets no such limit, but every field costs each document
 * an entry per value and the index name lists them all: a query on hundreds of fields is a mistake or an
 * attack, and belongs in a static index if it is neither.
 */
export const MAX_AUTO_INDEX_FIELDS = 64;

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
/** IndexNameSchema's limit: an automatic index's name is shortened (below) to fit it. */
const MAX_INDEX_NAME = IndexNameSchema.maxLength ?? 200;
const HASH_CHARS = 16;

/**
 * Picks the automatic index that answers a collection query, or designs a
 * new one: the union of the fields of the collection's widest automatic
 * index and the fields this query needs (RavenDB's "extend, then retire the
 * old one"), so indexes converge instead of multiplying.
 */
export function chooseAutoIndex(needs: IndexNeeds, existing: readonly IndexDefinition[]): AutoIndexChoice {
  if (needs.fields.size > MAX_AUTO_INDEX_FIELDS) {
    throw new RookeryError(
      'InvalidQuery',
      `The query filters, sorts or searches on ${needs.fields.size} fields of ${needs.collection}; an automatic ` +
        `index takes at most ${MAX_AUTO_INDEX_FIELDS}. Define a static index with the fields you need ` +
        '(PUT /databases/{db}/indexes) and query it with from index',
    );
  }
  for (const field of needs.fields) {
    const parsed = FieldNameSchema.safeParse(field);
    if (!parsed.success) {
      throw new RookeryError(
        'InvalidQuery',
        `An automatic index cannot have a field named "${field}": ${parsed.error.issues[0]?.message}. ` +
          'Define a static index that maps it to such a name (PUT /databases/{db}/indexes) and query that',
      );
    }
  }
  const collection = needs.collection.toLowerCase();
  const mine = existing
    .filter((d) => d.Name.toLowerCase().startsWith(AUTO_PREFIX.toLowerCase()))
    .filter((d) => d.Reduce === undefined)
    .map((d) => ({ definition: d, map: (d.Maps as DeclarativeMap[])[0] }))
    .filter((d): d is { definition: IndexDefinition; map: DeclarativeMap } => d.map !== undefined)
    // By the map, not the name: a shortened name no longer shows its collection whole.
    .filter((d) => d.map.Collection.toLowerCase() === collection);
  const covering = mine.find(({ definition, map }) => covers(definition, map, needs));
  if (covering) return { kind: 'use', name: covering.definition.Name };

  const candidates = mine.sort(
    (a, b) => Object.keys(b.map.Fields).length - Object.keys(a.map.Fields).length,
  )[0];
  // Extending the widest index must not take it past the limit: then this query gets an index of its own.
  const widest =
    candidates &&
    new Set([...Object.keys(candidates.map.Fields), ...needs.fields]).size <= MAX_AUTO_INDEX_FIELDS
      ? candidates
      : undefined;
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
    Name: autoIndexName(`${AUTO_PREFIX}${needs.collection}/By${label}`),
    Maps: [{ Collection: needs.collection, Fields: Object.fromEntries(names.map((n) => [n, fields[n]!])) }],
    ...(searched.size > 0
      ? { Fields: Object.fromEntries([...searched].sort().map((n) => [n, { Indexing: 'Search' as const }])) }
      : {}),
  };
  return { kind: 'create', definition: checked(definition), supersedes: widest?.definition.Name ?? null };
}

/**
 * The name as RavenDB builds it when it is a valid index name; otherwise (too long, or a collection name
 * with characters an index name cannot have) its valid characters cut to fit, then a hash of the whole
 * name, so it stays unique and the same query finds it again. RavenDB shortens its long names alike.
 */
function autoIndexName(full: string): string {
  if (IndexNameSchema.safeParse(full).success) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, HASH_CHARS);
  const kept = full.replace(/[^A-Za-z0-9_./@()[\]-]/g, '_').slice(0, MAX_INDEX_NAME - HASH_CHARS - 1);
  return `${kept}-${hash}`;
}

/**
 * The automatic definition through the same schema the indexer parses its requests with: what the indexer
 * would refuse (a field name an index cannot have) is refused here, as the query's own error.
 */
function checked(definition: IndexDefinition): IndexDefinition {
  const parsed = IndexDefinitionSchema.safeParse(definition);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.at(-1) === undefined ? '' : ` (${String(issue.path.at(-1))})`;
  throw new RookeryError(
    'InvalidQuery',
    `This query needs an automatic index that cannot be defined: ${issue?.message ?? 'invalid'}${where}. ` +
      'Query fields an index can name, or define a static index that maps them (PUT /databases/{db}/indexes)',
  );
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
