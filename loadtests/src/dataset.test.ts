import { generatePackages, PACKAGES_SEARCH_INDEX } from '@rookery/datagen';
import { IndexDefinitionSchema } from '@rookery/protocol';
import { describe, expect, it } from 'vitest';
import { misspell, TagTally } from './dataset.js';
import { NUGET_QUERIES } from './nuget-queries.js';

describe('TagTally', () => {
  it('chooses common, rare, co-occurring and misspelt terms from the tags the data has', () => {
    const tally = new TagTally();
    for (const doc of generatePackages({ seed: 1, packageVersions: 5_000 })) tally.add(doc);
    const terms = tally.terms();
    expect(terms.common).toHaveLength(8);
    expect(terms.common[0]).toBe('json'); // rank 1 of the Zipf-drawn tags
    expect(terms.rare.every((t) => !terms.common.includes(t))).toBe(true);
    for (const [a, b] of terms.pairs) expect(terms.common).toEqual(expect.arrayContaining([a, b]));
    expect(terms.misspelled).toContain('jquryt');
  });

  it('counts a package once whatever its number of versions', () => {
    const tally = new TagTally();
    for (let i = 0; i < 5; i++) tally.add({ PackageId: 'A', Tags: ['redis'] });
    tally.add({ PackageId: 'B', Tags: ['mongodb', 'Redis'] });
    tally.add({ PackageId: 'C', Tags: ['mongodb'] });
    tally.add({ PackageId: 'D', Tags: ['mongodb'] });
    expect(tally.terms()).toMatchObject({ common: ['mongodb', 'redis'], pairs: [['mongodb', 'redis']] });
  });

  it('is the same on every run', () => {
    const run = () => {
      const tally = new TagTally();
      for (const doc of generatePackages({ seed: 7, packageVersions: 2_000 })) tally.add(doc);
      return tally.terms();
    };
    expect(run()).toEqual(run());
  });
});

describe('misspell', () => {
  it('drops the fourth letter and adds a t, as the seed misspelt jquery', () => {
    expect(misspell('jquery')).toBe('jquryt');
    expect(misspell('logging')).toBe('logingt');
  });
});

describe('the NuGet index and queries', () => {
  it('Packages/Search is a valid index definition', () => {
    expect(IndexDefinitionSchema.parse(PACKAGES_SEARCH_INDEX).Name).toBe('Packages/Search');
  });

  it('every query reads the index the runner builds', () => {
    for (const text of Object.values(NUGET_QUERIES)) expect(text).toContain("from index 'Packages/Search'");
  });
});
