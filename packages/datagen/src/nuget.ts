// A deterministic generator of NuGet-gallery-like package documents (one
// document per package version), lazy so millions can be streamed without
// holding them. Every package draws from its own PRNG stream (seed, package
// number), so a package is the same whatever was generated before it and a
// smaller run is a prefix of a larger one (except that the last package of a
// run is cut to the versions that still fit).
import { logNormalInt, Random, ZipfSampler } from './random.js';
import {
  DESCRIPTION_WORDS,
  FIRST_NAMES,
  ID_OWNERS,
  ID_PRODUCTS,
  ID_SUFFIXES,
  LAST_NAMES,
  PLATFORMS,
  TAGS,
} from './vocabulary.js';

/** One package version, shaped like a document of RavenDB's NuGet sample dataset. */
export interface PackageDocument {
  '@metadata': { '@collection': 'Packages' };
  /** `packages/<lowercase package id>/<version>`. */
  id: string;
  PackageId: string;
  Version: string;
  Title: string;
  Tags: string[];
  Description: string;
  Authors: string[];
  /** ISO 8601, UTC; strictly increasing over a package's versions. */
  Created: string;
  /** ISO 8601, UTC; a few seconds to minutes after Created. */
  Published: string;
  /** Downloads of the package (all versions); the same on every version of a package. */
  DownloadCount: number;
  /** Downloads of this version; a package's versions sum to its DownloadCount. */
  VersionDownloadCount: number;
  IsPrerelease: boolean;
  /** The highest stable version of the package (exactly one per package). */
  IsLatestVersion: boolean;
  /** The highest version of the package, prerelease or not (exactly one per package). */
  IsAbsoluteLatestVersion: boolean;
}

export interface GeneratePackagesOptions {
  /** A 32-bit integer; the same seed gives byte-identical documents. */
  seed: number;
  /** How many documents (package versions) to yield. */
  packageVersions: number;
}

/** The most versions one package has. */
export const MAX_VERSIONS_PER_PACKAGE = 20;
/** Zipf exponents: tags are a little more skewed than description words. */
export const TAG_ZIPF_EXPONENT = 1.05;
export const DESCRIPTION_ZIPF_EXPONENT = 1;

const tagSampler = new ZipfSampler(TAGS, TAG_ZIPF_EXPONENT);
const wordSampler = new ZipfSampler(DESCRIPTION_WORDS, DESCRIPTION_ZIPF_EXPONENT);
const tagSet = new Set(TAGS);
// Coined names ("Kalomi", "Rutevo"): a long tail of rare terms, like the product
// and people names of real descriptions, so a full-text index over the
// documents has a realistic vocabulary size (tens of thousands of terms, most of
// them in a handful of documents) and not only the few hundred listed words.
export const COINED_NAMES = 100_000;
const coinedSampler = new ZipfSampler(
  Array.from({ length: COINED_NAMES }, (_, rank) => rank),
  1,
);
const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'sa',
  'ti',
  'vo',
  'zu',
  'be',
  'da',
  'fe',
  'go',
  'hi',
  'ju',
  'pe',
  'qua',
  'rho',
  'xen',
  'yl',
];

/** The coined name of rank `rank` (0-based): two or more syllables, distinct for every rank. */
export function coinedName(rank: number): string {
  let n = rank + SYLLABLES.length; // at least two syllables
  let name = '';
  while (n > 0) {
    name = SYLLABLES[n % SYLLABLES.length]! + name;
    n = Math.floor(n / SYLLABLES.length);
  }
  return capitalize(name);
}

const DAY_MS = 86_400_000;
const FIRST_CREATED_MS = Date.UTC(2010, 9, 1); // the NuGet gallery opened in October 2010
const CREATED_SPAN_MS = Date.UTC(2013, 5, 1) - FIRST_CREATED_MS;
const STAGES = ['alpha', 'beta', 'rc'] as const;
const ADJECTIVES = [
  'simple',
  'lightweight',
  'fast',
  'flexible',
  'powerful',
  'portable',
  'fluent',
  'extensible',
  'minimal',
  'robust',
  'small',
  'modern',
];
const NOUNS = [
  'library',
  'framework',
  'toolkit',
  'wrapper',
  'client',
  'implementation',
  'set of helpers',
  'collection of extensions',
  'engine',
  'provider',
];
const TITLE_TAILS = ['Library', 'Toolkit', 'for .NET', 'Extensions', 'Helpers', '(Community Edition)'];

// Package ids: package number n maps to (owner, product, suffix) through an
// affine permutation of the id space, so ids are unique without remembering
// them. Past the end of the space a generation number is appended to the
// owner ("Raven2.Json.Core"); owners never end in a digit and suffixes never
// start with one, so ids stay unique, case-insensitively too.
const ID_SPACE = ID_OWNERS.length * ID_PRODUCTS.length * ID_SUFFIXES.length;
const ID_MULTIPLIER = coprimeNear(ID_SPACE, Math.floor(ID_SPACE * 0.6180339887));
const ID_OFFSET = 7919;

function gcd(a: number, b: number): number {
  let x = a;
  let y = b;
  while (y !== 0) {
    const t = x % y;
    x = y;
    y = t;
  }
  return x;
}

function coprimeNear(modulus: number, start: number): number {
  let m = start;
  while (gcd(m, modulus) !== 1) m++;
  return m;
}

interface IdParts {
  owner: string;
  product: string;
  suffix: string;
  packageId: string;
}

function idParts(index: number): IdParts {
  const generation = Math.floor(index / ID_SPACE);
  const slot = ((index % ID_SPACE) * ID_MULTIPLIER + ID_OFFSET) % ID_SPACE;
  const owner = ID_OWNERS[slot % ID_OWNERS.length]!;
  const rest = Math.floor(slot / ID_OWNERS.length);
  const product = ID_PRODUCTS[rest % ID_PRODUCTS.length]!;
  const suffix = ID_SUFFIXES[Math.floor(rest / ID_PRODUCTS.length)]!;
  const ownerPart = generation === 0 ? owner : `${owner}${generation + 1}`;
  return { owner, product, suffix, packageId: `${ownerPart}.${product}${suffix}` };
}

/** The PackageId of the package with this number (0-based); unique, case-insensitively, for every number. */
export function packageIdAt(index: number): string {
  return idParts(index).packageId;
}

/**
 * SemVer 2 precedence (build metadata is not used here): -1, 0 or 1. A
 * prerelease sorts before its release; prerelease identifiers compare
 * numerically when numeric, else in ASCII order.
 */
export function compareVersions(a: string, b: string): number {
  const [coreA = '', preA] = splitVersion(a);
  const [coreB = '', preB] = splitVersion(b);
  const partsA = coreA.split('.');
  const partsB = coreB.split('.');
  for (let i = 0; i < Math.max(partsA.length, partsB.length); i++) {
    const diff = Number(partsA[i] ?? 0) - Number(partsB[i] ?? 0);
    if (diff !== 0) return Math.sign(diff);
  }
  if (preA === undefined || preB === undefined) {
    if (preA === preB) return 0;
    return preA === undefined ? 1 : -1;
  }
  const idsA = preA.split('.');
  const idsB = preB.split('.');
  for (let i = 0; i < Math.min(idsA.length, idsB.length); i++) {
    const x = idsA[i]!;
    const y = idsB[i]!;
    if (x === y) continue;
    const xNumeric = /^\d+$/.test(x);
    const yNumeric = /^\d+$/.test(y);
    if (xNumeric && yNumeric) return Math.sign(Number(x) - Number(y));
    if (xNumeric !== yNumeric) return xNumeric ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return Math.sign(idsA.length - idsB.length);
}

function splitVersion(version: string): [string, string | undefined] {
  const dash = version.indexOf('-');
  return dash === -1 ? [version, undefined] : [version.slice(0, dash), version.slice(dash + 1)];
}

interface GeneratedVersion {
  version: string;
  prerelease: boolean;
}

/**
 * `count` increasing versions. The first is always stable (so every package
 * has a latest stable version); later ones bump patch, minor or major, and a
 * bump may go through prereleases first (`2.0.0-alpha1` < `2.0.0-beta1` <
 * `2.0.0-rc1` < `2.0.0`). A package may end on a prerelease.
 */
function generateVersions(rng: Random, count: number): GeneratedVersion[] {
  let major = rng.chance(0.35) ? 0 : 1;
  let minor = major === 0 || rng.chance(0.3) ? rng.int(1, 5) : 0;
  let patch = 0;
  const core = () => `${major}.${minor}.${patch}`;
  const out: GeneratedVersion[] = [{ version: core(), prerelease: false }];
  // Single-digit prerelease numbers keep ASCII order equal to SemVer order.
  let stage = -1;
  let number = 0;
  while (out.length < count) {
    if (stage >= 0) {
      const exhausted = stage === STAGES.length - 1 && number === 9;
      if (exhausted || rng.chance(0.35)) {
        stage = -1;
        out.push({ version: core(), prerelease: false });
        continue;
      }
      if (number < 9 && (stage === STAGES.length - 1 || rng.chance(0.6))) number++;
      else {
        stage++;
        number = 1;
      }
      out.push({ version: `${core()}-${STAGES[stage]}${number}`, prerelease: true });
      continue;
    }
    const bump = rng.float();
    let prereleaseChance = 0.3;
    if (bump < 0.6) {
      patch++;
      prereleaseChance = 0.04;
    } else if (bump < 0.9) {
      minor++;
      patch = 0;
    } else {
      major++;
      minor = 0;
      patch = 0;
    }
    if (rng.chance(prereleaseChance)) {
      stage = rng.chance(0.7) ? 1 : 0;
      number = 1;
      out.push({ version: `${core()}-${STAGES[stage]}${number}`, prerelease: true });
    } else {
      out.push({ version: core(), prerelease: false });
    }
  }
  return out;
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/**
 * `new Date(ms).toISOString()` for years 0000–9999, about ten times faster
 * (toISOString was most of the generator's time). Howard Hinnant's
 * civil-from-days algorithm.
 */
export function isoFromEpochMs(ms: number): string {
  const days = Math.floor(ms / DAY_MS);
  let rest = ms - days * DAY_MS;
  const millis = rest % 1000;
  rest = (rest - millis) / 1000;
  const seconds = rest % 60;
  rest = (rest - seconds) / 60;
  const minutes = rest % 60;
  const hours = (rest - minutes) / 60;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const ms3 = millis < 10 ? `00${millis}` : millis < 100 ? `0${millis}` : `${millis}`;
  const date = `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}`;
  return `${date}T${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${ms3}Z`;
}

function capitalize(text: string): string {
  return text.length === 0 ? text : text[0]!.toUpperCase() + text.slice(1);
}

function describe(rng: Random, title: string, tags: readonly string[]): string {
  const tagA = tags[0] ?? wordSampler.sample(rng);
  const tagB = tags[1] ?? wordSampler.sample(rng);
  const adjective = rng.pick(ADJECTIVES);
  const noun = rng.pick(NOUNS);
  const platform = rng.pick(PLATFORMS);
  let text: string;
  switch (rng.int(0, 3)) {
    case 0:
      text = `${title} is ${/^[aeiou]/.test(adjective) ? 'an' : 'a'} ${adjective} ${noun} for ${platform}.`;
      break;
    case 1:
      text = `A ${adjective} ${noun} for ${tagA} and ${tagB}.`;
      break;
    case 2:
      text = `${capitalize(adjective)} ${noun} that makes ${tagA} easy on ${platform}.`;
      break;
    default:
      text = `Provides ${wordSampler.sample(rng)} ${wordSampler.sample(rng)} for ${tagA} applications.`;
  }
  if (rng.chance(0.35)) {
    const first = coinedName(coinedSampler.sample(rng));
    text += rng.chance(0.5)
      ? ` Works with ${first} and ${coinedName(coinedSampler.sample(rng))}.`
      : ` Based on ${first}.`;
  }
  // Filler sentences from the Zipf word list: the bulk of the full-text vocabulary.
  let words = logNormalInt(rng, { median: 14, sigma: 0.8, min: 0, max: 160 });
  while (words > 0) {
    const sentence = Math.min(words, rng.int(5, 14));
    words -= sentence;
    let line = capitalize(wordSampler.sample(rng));
    for (let i = 1; i < sentence; i++) line += ` ${wordSampler.sample(rng)}`;
    text += ` ${line}.`;
  }
  return text;
}

function authorsFor(rng: Random, owner: string): string[] {
  if (rng.chance(0.25)) return [`${owner} Team`];
  const count = rng.chance(0.75) ? 1 : rng.int(2, 3);
  const authors: string[] = [];
  for (let attempt = 0; authors.length < count && attempt < 10; attempt++) {
    const name = `${rng.pick(FIRST_NAMES)} ${rng.pick(LAST_NAMES)}`;
    if (!authors.includes(name)) authors.push(name);
  }
  return authors;
}

function titleFor(rng: Random, parts: IdParts): string {
  const r = rng.float();
  if (r < 0.45) return parts.packageId;
  const suffixWord = parts.suffix.slice(1);
  if (r < 0.85)
    return suffixWord ? `${parts.owner} ${parts.product} ${suffixWord}` : `${parts.owner} ${parts.product}`;
  return `${parts.owner} ${parts.product} ${rng.pick(TITLE_TAILS)}`;
}

/**
 * The versions of package number `index` for `seed`, oldest first, at most
 * `maxVersions` of them (the package is generated as if it had only that many).
 */
export function generatePackage(
  seed: number,
  index: number,
  maxVersions = MAX_VERSIONS_PER_PACKAGE,
): PackageDocument[] {
  const rng = new Random(seed, index);
  const parts = idParts(index);
  // Redrawn rather than clamped above the maximum, so 20 versions is not a pile-up.
  let drawn = logNormalInt(rng, { median: 2, sigma: 0.95, min: 1 });
  while (drawn > MAX_VERSIONS_PER_PACKAGE) drawn = logNormalInt(rng, { median: 2, sigma: 0.95, min: 1 });
  const count = Math.min(drawn, maxVersions);

  const tags = tagSampler.sampleDistinct(rng, logNormalInt(rng, { median: 4, sigma: 0.6, min: 1, max: 12 }));
  const productTag = parts.product.toLowerCase();
  if (tagSet.has(productTag) && !tags.includes(productTag) && rng.chance(0.7)) tags.unshift(productTag);
  const title = titleFor(rng, parts);
  const description = describe(rng, title, tags);
  const authors = authorsFor(rng, parts.owner);
  const downloads = logNormalInt(rng, { median: 700, sigma: 2.3, min: 0, max: 250_000_000 });

  const versions = generateVersions(rng, count);
  let latestStable = 0;
  for (let i = 0; i < versions.length; i++) if (!versions[i]!.prerelease) latestStable = i;

  // Later versions get more of the downloads; the remainder goes to the latest stable one.
  const weights = versions.map((_, i) => (0.1 + rng.float()) * (1 + 0.4 * i));
  const totalWeight = weights.reduce((sum, w) => sum + w, 0);
  const perVersion = weights.map((w) => Math.floor((downloads * w) / totalWeight));
  perVersion[latestStable] =
    perVersion[latestStable]! + downloads - perVersion.reduce((sum, n) => sum + n, 0);

  const lowerId = parts.packageId.toLowerCase();
  let created = FIRST_CREATED_MS + Math.floor(rng.float() * CREATED_SPAN_MS);
  const documents: PackageDocument[] = [];
  for (let i = 0; i < versions.length; i++) {
    const { version, prerelease } = versions[i]!;
    if (i > 0)
      created += logNormalInt(rng, { median: 20 * DAY_MS, sigma: 1.2, min: 3_600_000, max: 730 * DAY_MS });
    const published = created + rng.int(1_000, 300_000);
    documents.push({
      '@metadata': { '@collection': 'Packages' },
      id: `packages/${lowerId}/${version}`,
      PackageId: parts.packageId,
      Version: version,
      Title: title,
      Tags: [...tags],
      Description: description,
      Authors: [...authors],
      Created: isoFromEpochMs(created),
      Published: isoFromEpochMs(published),
      DownloadCount: downloads,
      VersionDownloadCount: perVersion[i]!,
      IsPrerelease: prerelease,
      IsLatestVersion: i === latestStable,
      IsAbsoluteLatestVersion: i === versions.length - 1,
    });
  }
  return documents;
}

/**
 * Yields `packageVersions` documents, package by package, versions oldest
 * first. Lazy: memory stays flat however many are asked for (2,000,000 is
 * fine); only one package's versions are held at a time.
 */
export function* generatePackages(
  options: GeneratePackagesOptions,
): Generator<PackageDocument, void, undefined> {
  const { seed, packageVersions } = options;
  if (!Number.isInteger(seed)) throw new TypeError(`seed must be an integer (got ${seed})`);
  if (!Number.isInteger(packageVersions) || packageVersions < 0) {
    throw new RangeError(`packageVersions must be a non-negative integer (got ${packageVersions})`);
  }
  let remaining = packageVersions;
  for (let index = 0; remaining > 0; index++) {
    const documents = generatePackage(seed, index, remaining);
    remaining -= documents.length;
    yield* documents;
  }
}

/** NDJSON: one `JSON.stringify(document)` per line, each ending in `\n`. Lazy like its input. */
export function* toNdjsonLines(documents: Iterable<object>): Generator<string, void, undefined> {
  for (const document of documents) yield `${JSON.stringify(document)}\n`;
}
