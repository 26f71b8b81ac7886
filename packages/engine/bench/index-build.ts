// pnpm bench:index-build --docs-dir D [--index map|mapreduce] [--rounds N] [--against CHECKOUT]
//                         [--without FIELD,FIELD...] [--postgres true]
//
// Builds one of bench:queries' two indexes from scratch over D/docs.db, the
// way the indexer process does (DatabaseIndexer.step() with its prepare
// thread), and prints docs/s. D is a database kept by
// `pnpm bench:queries --dir D`; the build runs on a copy, so D stays as it is.
//
// --against CHECKOUT alternates builds by this working tree and by another
// one of Rookery (e.g. `git worktree add ../before HEAD~1` and
// `pnpm install` there), each in a fresh process, N rounds (default 2), and
// prints both sides and the ratio of their medians: old and new side by side
// in one run, as the machines here are too noisy to compare separate runs.
//
// --without builds the map index without some of its fields (comma-separated;
// a map keeps at least one): what each field costs, and, with one cheap field
// left, about what reading, parsing and storing the entries cost alone.
//
// --postgres true also builds the same index's PostgreSQL equivalent in each round, over the same
// documents loaded once into a private PostgreSQL (postgres-index-build.ts says which indexes and
// why), and prints its docs/s and the ratio of the medians: both sides in one run.
//
// Stages go to stderr; the last stdout line is one JSON object.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { DeclarativeMap, IndexDefinition } from '@rookery/protocol';
import { z } from 'zod';
import { BY_FIELDS_INDEX, SEARCH_INDEX } from './nuget-indexes.js';
import { startPostgresIndexBuild } from './postgres-index-build.js';

/** The map index's fields, which --without may leave out. */
const MAP_FIELDS = Object.keys((BY_FIELDS_INDEX.Maps[0] as DeclarativeMap).Fields) as [string, ...string[]];

const ArgsSchema = z
  .object({
    'docs-dir': z
      .string({ error: '--docs-dir D is required: a database kept by pnpm bench:queries --dir D' })
      .min(1),
    index: z.enum(['map', 'mapreduce']).default('map'),
    rounds: z.coerce.number().int().min(1).max(20).default(2),
    against: z.string().min(1).optional(),
    without: z
      .string()
      .transform((list) => list.split(',').map((f) => f.trim()))
      .pipe(
        z
          .array(
            z.enum(MAP_FIELDS, {
              error: (issue) =>
                `${JSON.stringify(issue.input)} is not a field of the map index; its fields are ${MAP_FIELDS.join(', ')}`,
            }),
          )
          .refine((dropped) => MAP_FIELDS.some((f) => !dropped.includes(f)), {
            message: 'a map keeps at least one field: leave one out of --without',
          }),
      )
      .optional(),
    postgres: z.enum(['true', 'false']).default('false'),
    /** Internal: one build with the code of this checkout (the child processes). */
    code: z.string().min(1).optional(),
  })
  .strict()
  .refine((args) => args.without === undefined || args.index === 'map', {
    path: ['without'],
    message: '--without leaves out fields of the map index; use it with --index map',
  })
  .refine((args) => args.without === undefined || args.postgres === 'false', {
    path: ['postgres'],
    message: 'the PostgreSQL side builds the whole index: leave out --without, or --postgres',
  });
type Args = z.infer<typeof ArgsSchema>;

/** The index to build: the map/reduce index as it is, or the map index without the --without fields and their options. */
function definitionOf(args: Args): IndexDefinition {
  if (args.index === 'mapreduce') return SEARCH_INDEX;
  const dropped = new Set<string>(args.without ?? []);
  const keep = <T>(record: Record<string, T>) =>
    Object.fromEntries(Object.entries(record).filter(([name]) => !dropped.has(name)));
  return {
    ...BY_FIELDS_INDEX,
    Maps: (BY_FIELDS_INDEX.Maps as DeclarativeMap[]).map((map) => ({ ...map, Fields: keep(map.Fields) })),
    Fields: keep(BY_FIELDS_INDEX.Fields ?? {}),
  };
}

const THIS_CHECKOUT = path.resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const log = (message: string) =>
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);

function parseArgs(argv: readonly string[]): Args {
  const raw: Record<string, string> = {};
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i]!;
    if (!name.startsWith('--') || argv[i + 1] === undefined) {
      throw new Error(
        `expected --name value pairs, got ${JSON.stringify(name)}; see the comment at the top of index-build.ts`,
      );
    }
    raw[name.slice(2)] = argv[i + 1]!;
  }
  const parsed = ArgsSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (i) => (i.path.length > 0 ? `${i.path.join('.')}: ` : '') + i.message,
    );
    throw new Error(problems.join('; '));
  }
  return parsed.data;
}

/**
 * One build in this process with the indexer of `checkout`, imported from
 * that tree, so its code is what is timed (the definitions are this tree's,
 * the same on both sides); returns docs/s.
 */
async function buildOnce(checkout: string, docsDir: string, definition: IndexDefinition): Promise<number> {
  const engine = path.join(checkout, 'packages/engine/src/indexing');
  const load = (file: string) => import(pathToFileURL(path.join(engine, file)).href);
  const { DatabaseIndexer } = await load('database-indexer.ts');
  const { PrepareThread } = await load('prepare-thread.ts');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rookery-index-build-'));
  try {
    // The WAL too: a kept database may not have been checkpointed.
    for (const file of ['docs.db', 'docs.db-wal']) {
      const from = path.join(docsDir, file);
      if (fs.existsSync(from)) fs.copyFileSync(from, path.join(dir, file));
    }
    const prepareThread = new PrepareThread();
    const indexer = new DatabaseIndexer(dir, { prepareThread });
    indexer.put(definition);
    const started = performance.now();
    let done = 0;
    for (;;) {
      const progress: { documents: number }[] = await indexer.step();
      if (progress.length === 0) break;
      done += progress.reduce((sum, p) => sum + p.documents, 0);
    }
    const seconds = (performance.now() - started) / 1000;
    indexer.close();
    await prepareThread.close();
    if (done === 0)
      throw new Error(
        `no documents were indexed: is ${path.join(docsDir, 'docs.db')} a bench:queries database?`,
      );
    return Math.round(done / seconds);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** One build in a fresh process (so no side inherits the other's heap, caches or JIT state). */
function buildInChild(checkout: string, args: Args): number {
  const child = spawnSync(
    process.execPath,
    [
      ...process.execArgv,
      fileURLToPath(import.meta.url),
      '--docs-dir',
      args['docs-dir'],
      '--index',
      args.index,
      ...(args.without ? ['--without', args.without.join(',')] : []),
      '--code',
      checkout,
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20 },
  );
  if (child.error) throw new Error(`the build with ${checkout} did not start: ${child.error.message}`);
  const last = child.stdout.trim().split('\n').at(-1) ?? '';
  if (child.status !== 0) throw new Error(`the build with ${checkout} failed (exit ${child.status})`);
  return (JSON.parse(last) as { docs_per_s: number }).docs_per_s;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
};

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const docsDir = path.resolve(args['docs-dir']);
  if (!fs.existsSync(path.join(docsDir, 'docs.db'))) {
    throw new Error(`no docs.db in ${docsDir}: keep one with pnpm bench:queries --docs N --dir ${docsDir}`);
  }
  if (args.code) {
    console.log(
      JSON.stringify({ docs_per_s: await buildOnce(path.resolve(args.code), docsDir, definitionOf(args)) }),
    );
    return;
  }
  const sides = args.against ? [THIS_CHECKOUT, path.resolve(args.against)] : [THIS_CHECKOUT];
  const rates: number[][] = sides.map(() => []);
  const postgres = args.postgres === 'true' ? await startPostgresIndexBuild(docsDir, log) : null;
  const postgresRates: number[] = [];
  try {
    for (let round = 1; round <= args.rounds; round++) {
      sides.forEach((checkout, i) => {
        const rate = buildInChild(checkout, args);
        rates[i]!.push(rate);
        log(`round ${round}, ${checkout}: ${rate.toLocaleString('en')} docs/s`);
      });
      if (postgres) {
        const rate = await postgres.build(args.index);
        postgresRates.push(rate);
        log(`round ${round}, postgres: ${rate.toLocaleString('en')} docs/s`);
      }
    }
  } finally {
    await postgres?.stop();
  }
  const [mine, theirs] = rates.map(median);
  const postgresMedian = postgres ? median(postgresRates) : null;
  console.log(
    JSON.stringify({
      bench: 'index-build',
      index: args.index,
      ...(args.without ? { without: args.without } : {}),
      docs_per_s: rates[0],
      median_docs_per_s: mine,
      ...(args.against
        ? {
            against: path.resolve(args.against),
            against_docs_per_s: rates[1],
            against_median_docs_per_s: theirs,
          }
        : {}),
      ...(theirs ? { ratio: Math.round((mine! / theirs) * 1000) / 1000 } : {}),
      ...(postgresMedian
        ? {
            postgres_docs_per_s: postgresRates,
            postgres_median_docs_per_s: postgresMedian,
            vs_postgres: Math.round((mine! / postgresMedian) * 1000) / 1000,
          }
        : {}),
    }),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:index-build: ${(error as Error).message}\n`);
  process.exit(1);
});
