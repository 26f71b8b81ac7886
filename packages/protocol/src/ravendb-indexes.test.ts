import { describe, expect, it } from 'vitest';
import { RookeryError } from './errors.js';
import {
  fromRavenIndexDefinition,
  RavenIndexDefinitionSchema,
  RavenPutIndexesSchema,
} from './ravendb-indexes.js';

const raven = (extra: Record<string, unknown>) =>
  RavenIndexDefinitionSchema.parse({
    Name: 'Authors/ByName',
    Maps: ["map('Authors', a => ({ Name: a.Name }))"],
    ...extra,
  });

function refusal(run: () => unknown): RookeryError {
  try {
    run();
  } catch (error) {
    if (error instanceof RookeryError) return error;
    throw error;
  }
  throw new Error('expected a RookeryError');
}

describe('RavenDB index definitions', () => {
  it('reads a JavaScript index as the Node client sends it, ignoring settings with no meaning here', () => {
    const definition = fromRavenIndexDefinition(
      raven({
        IndexType: 'JavaScriptMap',
        LockMode: 'Unlock',
        Priority: 'Normal',
        Configuration: {},
        AdditionalSources: {},
        Fields: { Name: { Indexing: 'Search', Storage: 'Yes' }, Other: { Storage: 'Yes' } },
        ArchivedDataProcessingBehavior: 'IncludeArchived',
      }),
    );
    expect(definition).toEqual({
      Name: 'Authors/ByName',
      Maps: ["map('Authors', a => ({ Name: a.Name }))"],
      Fields: { Name: { Indexing: 'Search' } },
      IncludeArchived: true,
    });
  });

  it('refuses C#-syntax maps and reduces, naming JavaScript indexes as the way', () => {
    for (const linq of [
      'from a in docs.Authors select new { a.Name }',
      'docs.Authors.Select(a => new { a.Name })',
    ]) {
      const error = refusal(() => fromRavenIndexDefinition(raven({ Maps: [linq] })));
      expect(error.code).toBe('InvalidIndexDefinition');
      expect(error.message).toContain('JavaScript');
      expect(error.message).toContain("map('Users'");
    }
    const reduce = refusal(() =>
      fromRavenIndexDefinition(
        raven({ Reduce: 'from r in results group r by r.Name into g select new { }' }),
      ),
    );
    expect(reduce.message).toContain('C#-syntax');
  });

  it('refuses what Rookery does not have by name instead of dropping it', () => {
    expect(
      refusal(() => fromRavenIndexDefinition(raven({ AdditionalSources: { x: 'y' } }))).message,
    ).toContain('AdditionalSources');
    expect(
      refusal(() => fromRavenIndexDefinition(raven({ OutputReduceToCollection: 'Totals' }))).message,
    ).toContain('OutputReduceToCollection');
    expect(
      refusal(() => fromRavenIndexDefinition(raven({ Fields: { Name: { Analyzer: 'X' } } }))).message,
    ).toContain('analyzers');
    expect(refusal(() => fromRavenIndexDefinition(raven({ Name: 'bad name!' }))).message).toContain('Name');
  });

  it('takes at most 32 definitions a request, and no unknown keys', () => {
    const one = { Name: 'A', Maps: ["map('A', a => ({ X: a.X }))"] };
    expect(RavenPutIndexesSchema.safeParse({ Indexes: Array(33).fill(one) }).success).toBe(false);
    expect(RavenPutIndexesSchema.safeParse({ Indexes: [{ ...one, Surprise: 1 }] }).success).toBe(false);
  });
});
