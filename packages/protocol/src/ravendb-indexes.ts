// Index definitions as RavenDB's clients send them (`PUT …/indexes` and `PUT …/admin/indexes` with
// `{"Indexes": [...]}`), read into Rookery's IndexDefinition. Rookery runs JavaScript indexes: a C#-syntax (LINQ)
// map is refused with a message that says how to write it; RavenDB settings with no meaning here (lock mode,
// priority, storage, term vectors) are accepted and ignored, and features Rookery does not have (additional
// sources, output collections, analyzers) are refused by name rather than silently dropped.
import { z } from 'zod';
import { RookeryError } from './errors.js';
import { type FieldOptions, type IndexDefinition, IndexDefinitionSchema } from './indexes.js';

const RavenFieldOptionsSchema = z
  .object({
    Indexing: z.enum(['Default', 'Exact', 'Search', 'No']).nullish(),
    Storage: z.enum(['Yes', 'No']).nullish(),
    Suggestions: z.boolean().nullish(),
    TermVector: z.string().nullish(),
    Spatial: z.unknown().nullish(),
    Analyzer: z.string().nullish(),
  })
  .strict();

/** One index definition in RavenDB's shape (the keys its clients send; the pascal-cased IndexDefinition). */
export const RavenIndexDefinitionSchema = z
  .object({
    Name: z.string(),
    Maps: z.array(z.string()).min(1).max(32),
    Reduce: z.string().nullish(),
    Fields: z.record(z.string(), RavenFieldOptionsSchema).nullish(),
    Type: z.string().nullish(),
    IndexType: z.string().nullish(),
    SourceType: z.string().nullish(),
    LockMode: z.string().nullish(),
    Priority: z.string().nullish(),
    State: z.string().nullish(),
    DeploymentMode: z.string().nullish(),
    ArchivedDataProcessingBehavior: z.enum(['ExcludeArchived', 'IncludeArchived', 'ArchivedOnly']).nullish(),
    Configuration: z.record(z.string(), z.string().nullable()).nullish(),
    AdditionalSources: z.record(z.string(), z.string()).nullish(),
    AdditionalAssemblies: z.array(z.unknown()).nullish(),
    CompoundFields: z.array(z.unknown()).nullish(),
    OutputReduceToCollection: z.string().nullish(),
    ReduceOutputIndex: z.number().nullish(),
    PatternForOutputReduceToCollectionReferences: z.string().nullish(),
    PatternReferencesCollectionName: z.string().nullish(),
  })
  .strict();
export type RavenIndexDefinition = z.infer<typeof RavenIndexDefinitionSchema>;

/** `{"Indexes": [...]}`, the body of RavenDB's PutIndexesOperation. */
export const RavenPutIndexesSchema = z
  .object({ Indexes: z.array(RavenIndexDefinitionSchema).min(1).max(32) })
  .strict();

/** True for a body in RavenDB's `{"Indexes": [...]}` shape (as opposed to one Rookery index definition). */
export function isRavenPutIndexes(body: unknown): boolean {
  return typeof body === 'object' && body !== null && 'Indexes' in body;
}

/** A C#-syntax map or reduce: `from x in docs.Users …`, `docs.Users.Select(…)`, `from r in results …`. */
const LINQ = /^\s*(from\s+\S+\s+in\s|docs\s*\.|results\s*\.)/;

function refuse(name: string, message: string): RookeryError {
  return new RookeryError('InvalidIndexDefinition', `Index ${name}: ${message}`);
}

/** Reads one RavenDB index definition as Rookery's, or fails with InvalidIndexDefinition saying why. */
export function fromRavenIndexDefinition(raven: RavenIndexDefinition): IndexDefinition {
  const name = raven.Name;
  if ([...raven.Maps, raven.Reduce ?? ''].some((source) => LINQ.test(source)))
    throw refuse(
      name,
      "C#-syntax (LINQ) maps and reduces cannot be compiled: Rookery runs JavaScript indexes. Write the map as map('Users', u => ({ Name: u.Name })) — AbstractJavaScriptIndexCreationTask in the Node client",
    );
  if (raven.AdditionalSources && Object.keys(raven.AdditionalSources).length > 0)
    throw refuse(name, 'AdditionalSources are not supported; put the helper functions inside the map');
  if (raven.AdditionalAssemblies && raven.AdditionalAssemblies.length > 0)
    throw refuse(name, 'AdditionalAssemblies are not supported');
  if (raven.CompoundFields && raven.CompoundFields.length > 0)
    throw refuse(name, 'CompoundFields are not supported');
  if (raven.OutputReduceToCollection) throw refuse(name, 'OutputReduceToCollection is not supported');
  if (raven.ArchivedDataProcessingBehavior === 'ArchivedOnly')
    throw refuse(name, 'ArchivedOnly is not supported; IncludeArchived and ExcludeArchived are');
  const fields: Record<string, FieldOptions> = {};
  for (const [field, options] of Object.entries(raven.Fields ?? {})) {
    if (options.Analyzer) throw refuse(name, `field ${field}: custom analyzers are not supported`);
    if (options.Spatial) throw refuse(name, `field ${field}: spatial options are not supported here`);
    if (options.Indexing === 'No') throw refuse(name, `field ${field}: Indexing "No" is not supported`);
    const indexing = options.Indexing ?? undefined;
    const suggestions = options.Suggestions ?? undefined;
    if (indexing === undefined && suggestions === undefined) continue; // only storage or term vectors: no meaning here
    fields[field] = {
      ...(indexing !== undefined && { Indexing: indexing }),
      ...(suggestions !== undefined && { Suggestions: suggestions }),
    };
  }
  const parsed = IndexDefinitionSchema.safeParse({
    Name: name,
    Maps: raven.Maps,
    ...(raven.Reduce && { Reduce: raven.Reduce }),
    ...(Object.keys(fields).length > 0 && { Fields: fields }),
    ...(raven.ArchivedDataProcessingBehavior === 'IncludeArchived' && { IncludeArchived: true }),
  });
  if (!parsed.success)
    throw refuse(
      name,
      parsed.error.issues
        .map((issue) => `${issue.path.join('.') || 'definition'}: ${issue.message}`)
        .join('; '),
    );
  return parsed.data;
}

/**
 * One of Rookery's index definitions as RavenDB's GetIndexesOperation reads it. JavaScript maps go out as they
 * came in; declarative maps (Rookery's own, and automatic indexes), which RavenDB has no text for, go out as
 * their JSON. Settings Rookery does not have answer RavenDB's defaults.
 */
export function toRavenIndexDefinition(definition: IndexDefinition): Record<string, unknown> {
  const javascript = typeof definition.Maps[0] === 'string';
  const auto = definition.Name.toLowerCase().startsWith('auto/');
  const reduce = definition.Reduce;
  const fields: Record<string, Record<string, unknown>> = {};
  for (const [field, options] of Object.entries(definition.Fields ?? {})) {
    fields[field] = {
      Indexing: options.Indexing ?? null,
      Suggestions: options.Suggestions ?? null,
      Storage: null,
      TermVector: null,
      Spatial: null,
      Analyzer: null,
    };
  }
  return {
    Name: definition.Name,
    Maps: definition.Maps.map((map) => (typeof map === 'string' ? map : JSON.stringify(map))),
    Reduce: reduce === undefined ? null : typeof reduce === 'string' ? reduce : JSON.stringify(reduce),
    Fields: fields,
    Type: auto
      ? reduce === undefined
        ? 'AutoMap'
        : 'AutoMapReduce'
      : `${javascript ? 'JavaScript' : ''}${reduce === undefined ? 'Map' : 'MapReduce'}`,
    SourceType: 'Documents',
    LockMode: 'Unlock',
    Priority: 'Normal',
    State: 'Normal',
    ArchivedDataProcessingBehavior: definition.IncludeArchived ? 'IncludeArchived' : 'ExcludeArchived',
    Configuration: {},
    AdditionalSources: {},
    AdditionalAssemblies: [],
    OutputReduceToCollection: null,
    DeploymentMode: null,
  };
}
