// The NuGet-like dataset of the load tests: @rookery/datagen's seeded package
// versions written once as bulk-insert NDJSON (`{"Id", "Document"}` per line)
// into a cache directory, with the search terms the k6 scenarios use, chosen
// from the tags the dataset actually has: the most common ones, rare ones,
// pairs of common tags that occur together (the narrowing search) and
// misspellings of common ones (the "did you mean" page). The same seed and
// size give the same file, so it is reused between runs.

import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { generatePackages, type PackageDocument } from '@rookery/datagen';
import { z } from 'zod';
import { log, ProgressBar } from './log.js';
import { dataCacheDir } from './paths.js';

export const SearchTermsSchema = z.object({
  common: z.array(z.string()).min(1),
  rare: z.array(z.string()).min(1),
  pairs: z.array(z.tuple([z.string(), z.string()])).min(1),
  misspelled: z.array(z.string()).min(1),
});
export type SearchTerms = z.infer<typeof SearchTermsSchema>;

export interface Dataset {
  file: string;
  documents: number;
  terms: SearchTerms;
}

const COMMON = 8;
const RARE = 8;

/** The NDJSON file and the search terms for `documents` package versions of `seed`, generated if not cached. */
export async function nugetDataset(seed: number, documents: number): Promise<Dataset> {
  const base = path.join(dataCacheDir, `nuget-seed${seed}-${documents}`);
  const file = `${base}.ndjson`;
  const termsFile = `${base}.terms.json`;
  if (fs.existsSync(file) && fs.existsSync(termsFile)) {
    log(
      `dataset: ${documents.toLocaleString('en')} package versions (cached: ${path.relative(process.cwd(), file)})`,
    );
    return {
      file,
      documents,
      terms: SearchTermsSchema.parse(JSON.parse(fs.readFileSync(termsFile, 'utf8'))),
    };
  }
  fs.mkdirSync(dataCacheDir, { recursive: true });
  const tally = new TagTally();
  const bar = new ProgressBar('generating', documents, 'documents');
  // Written beside the final name and renamed at the end: an interrupted run leaves no half file to reuse.
  const partial = `${file}.partial`;
  const out = fs.createWriteStream(partial);
  let written = 0;
  for (const doc of generatePackages({ seed, packageVersions: documents })) {
    tally.add(doc);
    const { id, ...body } = doc;
    if (!out.write(`${JSON.stringify({ Id: id, Document: body })}\n`)) await once(out, 'drain');
    if (++written % 10_000 === 0) bar.update(written);
  }
  bar.update(written);
  bar.done();
  out.end();
  await once(out, 'finish');
  const terms = tally.terms();
  fs.writeFileSync(termsFile, `${JSON.stringify(terms, null, 2)}\n`);
  fs.renameSync(partial, file);
  return { file, documents, terms };
}

/** Counts tags per package (tags are package-level, and every package has a stable version). */
export class TagTally {
  private readonly counts = new Map<string, number>();
  private readonly packagesSeen = new Set<string>();
  private readonly tagSets: string[][] = [];

  add(doc: Pick<PackageDocument, 'PackageId' | 'Tags'>): void {
    if (this.packagesSeen.has(doc.PackageId)) return;
    this.packagesSeen.add(doc.PackageId);
    const tags = doc.Tags.map((t) => t.toLowerCase());
    for (const tag of tags) this.counts.set(tag, (this.counts.get(tag) ?? 0) + 1);
    this.tagSets.push(tags);
  }

  terms(): SearchTerms {
    // Alphabetical before by count, so ties are broken the same way on every run.
    const ranked = [...this.counts.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .sort((a, b) => b[1] - a[1]);
    const common = ranked.slice(0, COMMON).map(([tag]) => tag);
    const rare = ranked
      .filter(([, count]) => count > 0)
      .slice(-RARE)
      .map(([tag]) => tag)
      .filter((tag) => !common.includes(tag));
    const pairs: [string, string][] = [];
    for (let i = 0; i < common.length; i++) {
      for (let j = i + 1; j < common.length; j++) {
        const a = common[i]!;
        const b = common[j]!;
        if (this.tagSets.some((tags) => tags.includes(a) && tags.includes(b))) pairs.push([a, b]);
      }
    }
    const misspelled = common.filter((tag) => tag.length >= 5).map(misspell);
    return SearchTermsSchema.parse({ common, rare: rare.length > 0 ? rare : common, pairs, misspelled });
  }
}

/** A typo that a "did you mean" should fix: one letter dropped, one added (jquery → jquryt, as in the seed). */
export function misspell(word: string): string {
  return `${word.slice(0, 3)}${word.slice(4)}t`;
}
