import { IndexDefinitionSchema, RookeryError } from '@rookery/protocol';
import { describe, expect, it } from 'vitest';
import { chooseAutoIndex, type IndexNeeds, MAX_AUTO_INDEX_FIELDS } from './auto-index.js';

const needs = (collection: string, fields: string[], searched: string[] = []): IndexNeeds => ({
  collection,
  fields: new Set(fields),
  searched: new Set(searched),
  spatial: new Map(),
});
const fields = (count: number, prefix = 'F') => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

function refusal(run: () => unknown): RookeryError {
  try {
    run();
  } catch (error) {
    if (error instanceof RookeryError) return error;
    throw error;
  }
  throw new Error('expected a RookeryError');
}

describe('chooseAutoIndex', () => {
  it('refuses a query on more fields than an automatic index takes, naming the limit', () => {
    expect(() => chooseAutoIndex(needs('Users', fields(MAX_AUTO_INDEX_FIELDS)), [])).not.toThrow();
    const error = refusal(() => chooseAutoIndex(needs('Users', fields(MAX_AUTO_INDEX_FIELDS + 1)), []));
    expect(error.code).toBe('InvalidQuery');
    expect(error.message).toContain(`${MAX_AUTO_INDEX_FIELDS + 1} fields`);
    expect(error.message).toContain(`at most ${MAX_AUTO_INDEX_FIELDS}`);
    expect(error.message).toContain('static index');
  });

  it('refuses a field name no index can have, before the indexer sees it', () => {
    const error = refusal(() => chooseAutoIndex(needs('Users', ['first name']), []));
    expect(error.code).toBe('InvalidQuery');
    expect(error.message).toContain('"first name"');
  });

  it('shortens a name too long for an index name with a hash, the same every time, and finds it again', () => {
    const long = fields(20, 'SomeRatherLongFieldName');
    const first = chooseAutoIndex(needs('Users', long), []);
    if (first.kind !== 'create') throw new Error('expected a new index');
    expect(first.definition.Name.length).toBeLessThanOrEqual(200);
    expect(first.definition.Name).toMatch(/^Auto\/Users\/BySomeRatherLongFieldName0And.*-[0-9a-f]{16}$/);
    expect(IndexDefinitionSchema.safeParse(first.definition).success).toBe(true);
    const again = chooseAutoIndex(needs('Users', long), []);
    expect(again.kind === 'create' && again.definition.Name).toBe(first.definition.Name);
    expect(chooseAutoIndex(needs('Users', long.slice(0, 3)), [first.definition])).toEqual({
      kind: 'use',
      name: first.definition.Name,
    });
  });

  it('names the index of a collection whose name an index name cannot hold, and keeps collections apart', () => {
    const spaced = chooseAutoIndex(needs('My Things', ['Name']), []);
    const underscored = chooseAutoIndex(needs('My_Things', ['Name']), []);
    if (spaced.kind !== 'create' || underscored.kind !== 'create') throw new Error('expected new indexes');
    expect(spaced.definition.Name).toMatch(/^Auto\/My_Things\/ByName-[0-9a-f]{16}$/);
    expect(underscored.definition.Name).toBe('Auto/My_Things/ByName');
    // Each collection finds its own index, never the other's.
    const existing = [spaced.definition, underscored.definition];
    expect(chooseAutoIndex(needs('My Things', ['Name']), existing)).toEqual({
      kind: 'use',
      name: spaced.definition.Name,
    });
    expect(chooseAutoIndex(needs('my_things', ['Name']), existing)).toEqual({
      kind: 'use',
      name: 'Auto/My_Things/ByName',
    });
  });

  it('extends the widest index only while the union stays within the limit', () => {
    const wide = chooseAutoIndex(needs('Users', fields(60)), []);
    if (wide.kind !== 'create') throw new Error('expected a new index');
    const extended = chooseAutoIndex(needs('Users', ['Other']), [wide.definition]);
    expect(extended).toMatchObject({ kind: 'create', supersedes: wide.definition.Name });
    const apart = chooseAutoIndex(needs('Users', fields(10, 'G')), [wide.definition]);
    if (apart.kind !== 'create') throw new Error('expected a new index');
    expect(apart.supersedes).toBeNull();
    expect(Object.keys((apart.definition.Maps[0] as { Fields: object }).Fields)).toEqual(
      fields(10, 'G').sort(),
    );
  });
});
