import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  COINED_NAMES,
  coinedName,
  compareVersions,
  generatePackages,
  ID_OWNERS,
  ID_PRODUCTS,
  ID_SUFFIXES,
  MAX_VERSIONS_PER_PACKAGE,
  type PackageDocument,
  packageIdAt,
  paretoInt,
  Random,
  TAGS,
  toNdjsonLines,
  ZipfSampler,
} from './index.js';
import { isoFromEpochMs } from './nuget.js';

const ndjsonHash = (seed: number, packageVersions: number) => {
  const hash = createHash('sha256');
  for (const line of toNdjsonLines(generatePackages({ seed, packageVersions }))) hash.update(line);
  return hash.digest('hex');
};

/** Consecutive documents of the same package. */
function byPackage(documents: Iterable<PackageDocument>): PackageDocument[][] {
  const groups: PackageDocument[][] = [];
  let current: PackageDocument[] = [];
  for (const document of documents) {
    if (current.length > 0 && current[0]!.PackageId !== document.PackageId) {
      groups.push(current);
      current = [];
    }
    current.push(document);
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

describe('generatePackages', () => {
  it('yields exactly the number of documents asked for, lazily', () => {
    expect([...generatePackages({ seed: 1, packageVersions: 0 })]).toEqual([]);
    expect([...generatePackages({ seed: 1, packageVersions: 1 })]).toHaveLength(1);
    expect([...generatePackages({ seed: 1, packageVersions: 1234 })]).toHaveLength(1234);
    // Asking for two million and taking three must not generate two million.
    const iterator = generatePackages({ seed: 1, packageVersions: 2_000_000 });
    const firstThree = [iterator.next(), iterator.next(), iterator.next()];
    expect(firstThree.every((result) => result.done === false)).toBe(true);
  });

  it('is deterministic: the same seed gives byte-identical NDJSON, another seed does not', () => {
    expect(ndjsonHash(42, 5_000)).toBe(ndjsonHash(42, 5_000));
    expect(ndjsonHash(42, 5_000)).not.toBe(ndjsonHash(43, 5_000));
  });

  it('makes a smaller run a prefix of a larger one, up to its last (cut) package', () => {
    const small = [...generatePackages({ seed: 7, packageVersions: 3_000 })];
    const large = [...generatePackages({ seed: 7, packageVersions: 6_000 })];
    const smallPackages = byPackage(small);
    const complete = smallPackages.slice(0, -1).flat();
    expect(large.slice(0, complete.length)).toEqual(complete);
    expect(large[complete.length]!.PackageId).toBe(smallPackages.at(-1)![0]!.PackageId);
  });

  it('writes one JSON document per line', () => {
    const lines = [...toNdjsonLines(generatePackages({ seed: 3, packageVersions: 50 }))];
    expect(lines).toHaveLength(50);
    for (const line of lines) {
      expect(line.endsWith('\n')).toBe(true);
      expect(line.indexOf('\n')).toBe(line.length - 1);
      const document = JSON.parse(line) as PackageDocument;
      expect(document['@metadata']).toEqual({ '@collection': 'Packages' });
    }
  });

  it('keeps the package invariants', () => {
    const documents = [...generatePackages({ seed: 2024, packageVersions: 20_000 })];
    const packages = byPackage(documents);
    const tagVocabulary = new Set(TAGS);
    const ids = new Set<string>();
    const packageIds = new Set<string>();
    // Plain checks collected into one list: an expect() per field would take seconds here.
    const failures: string[] = [];
    const check = (ok: boolean, what: string, document: PackageDocument) => {
      if (!ok && failures.length < 20) failures.push(`${document.id}: ${what}`);
    };
    let multiVersion = 0;
    let endsInPrerelease = 0;
    let prereleases = 0;
    for (const versions of packages) {
      const first = versions[0]!;
      const last = versions.at(-1)!;
      check(!packageIds.has(first.PackageId.toLowerCase()), 'PackageId seen before', first);
      packageIds.add(first.PackageId.toLowerCase());
      check(versions.length <= MAX_VERSIONS_PER_PACKAGE, 'too many versions', first);
      if (versions.length > 1) multiVersion++;
      if (last.IsPrerelease) endsInPrerelease++;

      // Exactly one latest stable (the highest stable) and one absolute latest (the last).
      const latest = versions.filter((v) => v.IsLatestVersion);
      const absoluteLatest = versions.filter((v) => v.IsAbsoluteLatestVersion);
      check(latest.length === 1, `${latest.length} latest versions`, first);
      check(
        absoluteLatest.length === 1 && absoluteLatest[0] === last,
        'absolute latest is not the last',
        first,
      );
      check(
        latest[0] === versions.filter((v) => !v.IsPrerelease).at(-1),
        'latest is not the last stable',
        first,
      );

      let downloads = 0;
      for (let i = 0; i < versions.length; i++) {
        const v = versions[i]!;
        check(v.id === `packages/${v.PackageId.toLowerCase()}/${v.Version}`, 'id', v);
        check(!ids.has(v.id), 'duplicate id', v);
        ids.add(v.id);
        check(/^\d+\.\d+\.\d+(-(alpha|beta|rc)[1-9])?$/.test(v.Version), 'version format', v);
        check(v.IsPrerelease === v.Version.includes('-'), 'IsPrerelease', v);
        if (v.IsPrerelease) prereleases++;
        check(Date.parse(v.Published) > Date.parse(v.Created), 'Published after Created', v);
        check(new Set(v.Tags).size === v.Tags.length && v.Tags.length > 0, 'tags distinct, not empty', v);
        check(
          v.Tags.every((tag) => tagVocabulary.has(tag)),
          'tags from the vocabulary',
          v,
        );
        check(v.Authors.length > 0 && v.Title.length > 0 && v.Description.length > 0, 'text fields', v);
        // Package-level fields are the same on every version.
        check(v.DownloadCount === first.DownloadCount && v.Title === first.Title, 'package fields', v);
        check(v.Tags.join(' ') === first.Tags.join(' '), 'package tags', v);
        check(
          Number.isInteger(v.VersionDownloadCount) && v.VersionDownloadCount >= 0,
          'VersionDownloadCount',
          v,
        );
        downloads += v.VersionDownloadCount;
        if (i > 0) {
          const previous = versions[i - 1]!;
          check(compareVersions(previous.Version, v.Version) === -1, 'versions increase', v);
          check(Date.parse(v.Created) > Date.parse(previous.Created), 'Created increases', v);
        }
      }
      check(downloads === first.DownloadCount, 'version downloads sum to DownloadCount', first);
    }
    expect(failures).toEqual([]);
    // The shape is realistic, not degenerate.
    expect(packages.length).toBeGreaterThan(3_000);
    expect(multiVersion / packages.length).toBeGreaterThan(0.4);
    expect(endsInPrerelease).toBeGreaterThan(0);
    expect(prereleases / documents.length).toBeGreaterThan(0.02);
  });

  it('draws tags with a Zipf skew: the top tag is much more frequent than the 100th', () => {
    const counts = new Map<string, number>();
    const latest = [...generatePackages({ seed: 99, packageVersions: 60_000 })].filter(
      (d) => d.IsAbsoluteLatestVersion,
    );
    for (const document of latest) {
      for (const tag of document.Tags) counts.set(tag, (counts.get(tag) ?? 0) + 1);
    }
    const top = counts.get(TAGS[0]!) ?? 0;
    const hundredth = counts.get(TAGS[99]!) ?? 0;
    expect(top).toBeGreaterThan(0.3 * latest.length);
    expect(hundredth).toBeGreaterThan(0);
    expect(top).toBeGreaterThan(20 * hundredth);
    // The most frequent tag overall is the first of the vocabulary.
    const [mostFrequent] = [...counts].sort((a, b) => b[1] - a[1]);
    expect(mostFrequent![0]).toBe(TAGS[0]);
  });

  it('has heavy-tailed download counts', () => {
    const downloads = [...generatePackages({ seed: 5, packageVersions: 20_000 })]
      .filter((d) => d.IsAbsoluteLatestVersion)
      .map((d) => d.DownloadCount)
      .sort((a, b) => a - b);
    const median = downloads[Math.floor(downloads.length / 2)]!;
    const max = downloads.at(-1)!;
    expect(max).toBeGreaterThan(1_000 * median);
  });
});

describe('packageIdAt', () => {
  it('is unique case-insensitively, also past the end of the id space', () => {
    const space = ID_OWNERS.length * ID_PRODUCTS.length * ID_SUFFIXES.length;
    const seen = new Set<string>();
    const indexes = [
      ...Array.from({ length: 5_000 }, (_, i) => i),
      ...Array.from({ length: 4_000 }, (_, i) => space - 2_000 + i),
      ...Array.from({ length: 2_000 }, (_, i) => 2 * space - 1_000 + i),
    ];
    for (const index of indexes) {
      const id = packageIdAt(index).toLowerCase();
      expect(seen.has(id)).toBe(false);
      seen.add(id);
    }
    expect(packageIdAt(space)).toMatch(/^[A-Za-z]+2\./);
  });
});

describe('coinedName', () => {
  it('gives a distinct lowercase-unique word of letters for every rank', () => {
    const seen = new Set<string>();
    for (let rank = 0; rank < COINED_NAMES; rank++) {
      const name = coinedName(rank);
      if (!/^[A-Z][a-z]+$/.test(name) || seen.has(name.toLowerCase()))
        throw new Error(`rank ${rank}: ${name}`);
      seen.add(name.toLowerCase());
    }
    expect(seen.size).toBe(COINED_NAMES);
  });
});

describe('compareVersions', () => {
  it('orders by SemVer precedence', () => {
    const ordered = [
      '1.0.0-alpha1',
      '1.0.0-beta1',
      '1.0.0-beta2',
      '1.0.0-rc1',
      '1.0.0',
      '1.0.1',
      '1.2.0',
      '1.10.0',
    ];
    expect([...ordered].reverse().sort(compareVersions)).toEqual(ordered);
    expect(compareVersions('2.0.0', '2.0.0')).toBe(0);
    expect(compareVersions('1.0.0-2', '1.0.0-10')).toBe(-1);
    expect(compareVersions('1.0.0-alpha', '1.0.0-alpha.1')).toBe(-1);
  });
});

describe('random', () => {
  it('repeats a sequence for the same seed and stream and differs across streams', () => {
    const a = new Random(1, 5);
    const b = new Random(1, 5);
    const c = new Random(1, 6);
    const seqA = Array.from({ length: 8 }, () => a.uint32());
    expect(Array.from({ length: 8 }, () => b.uint32())).toEqual(seqA);
    expect(Array.from({ length: 8 }, () => c.uint32())).not.toEqual(seqA);
    const f = new Random(9).float();
    expect(f).toBeGreaterThanOrEqual(0);
    expect(f).toBeLessThan(1);
  });

  it('samples Zipf ranks with probability ~ 1/rank', () => {
    const items = Array.from({ length: 50 }, (_, i) => i);
    const zipf = new ZipfSampler(items, 1);
    const rng = new Random(11);
    const counts = new Array<number>(items.length).fill(0);
    for (let i = 0; i < 100_000; i++) {
      const index = zipf.sampleIndex(rng);
      counts[index] = counts[index]! + 1;
    }
    expect(counts[0]! / counts[9]!).toBeGreaterThan(7);
    expect(counts[0]! / counts[9]!).toBeLessThan(13);
    expect(zipf.probability(0) / zipf.probability(9)).toBeCloseTo(10, 6);
  });

  it('draws heavy-tailed Pareto integers at or above the minimum', () => {
    const rng = new Random(13);
    const values = Array.from({ length: 20_000 }, () => paretoInt(rng, { min: 10, alpha: 1.2 })).sort(
      (a, b) => a - b,
    );
    expect(values[0]).toBe(10);
    expect(values[values.length / 2]!).toBeLessThan(30);
    expect(values.at(-1)!).toBeGreaterThan(2_000);
  });

  it('formats ISO dates like Date#toISOString', () => {
    const rng = new Random(12);
    for (let i = 0; i < 10_000; i++) {
      const ms = Math.floor(rng.float() * 4_102_444_800_000); // 1970 – 2100
      expect(isoFromEpochMs(ms)).toBe(new Date(ms).toISOString());
    }
    expect(isoFromEpochMs(951_782_400_000)).toBe('2000-02-29T00:00:00.000Z');
  });
});
