// pnpm bench:vs-postgres [--docs N] [--seed S] [--iterations N] [--queries N] [--bulk N] [--puts N]
//
// Every row of issue [13]'s table, Rookery and PostgreSQL 15 side by side on this machine, in one run
// of the benchmarks that measure them, each a child process with the same --docs and --seed (services
// do not import each other and packages do not import services, so this script spawns them):
//
//   1. bench:vs-postgres-queries   listing page, searches (cold, warm, mixed), tag facets, startsWith,
//                                  point equality; keeps its docs.db for 2 and 3
//   2. bench:index-build --index map --postgres true          over that docs.db
//   3. bench:index-build --index mapreduce --postgres true    over that docs.db
//   4. bench:vs-postgres-suggest   "did you mean"
//   5. bench:vs-postgres-writes    durable single-document writes (64 connections) and a bulk load
//
// Each benchmark checks that both sides give the same answers and exits non-zero otherwise (and so
// does this run). The children's stages go to stderr as they run; the last stdout line is ONE JSON
// object: `rows` maps each figure to {rookery, postgres, ratio}, where ratio is how many times
// Rookery is ahead (latency: postgres / rookery; throughput: rookery / postgres; above 1, Rookery is
// faster), with the machine, the commit, and the load average before and after.
// packages/engine/bench/README.md lists the PostgreSQL indexes and why an expert picks them.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULTS = { docs: 200_000, seed: 1, iterations: 300, queries: 100, bulk: 200_000, puts: 40_000 };

function parseArgs(argv) {
  const args = { ...DEFAULTS };
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i]?.replace(/^--/, '');
    const value = Number(argv[i + 1]);
    if (!argv[i]?.startsWith('--') || !(name in DEFAULTS) || !Number.isInteger(value) || value < 1) {
      throw new Error(
        `expected --name value pairs with a positive integer, of ${Object.keys(DEFAULTS).join(', ')}; got ${argv.slice(i, i + 2).join(' ')}`,
      );
    }
    args[name] = value;
  }
  return args;
}

const log = (message) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);
const loadavg = () => os.loadavg().map((l) => Number(l.toFixed(2)));
const round = (n) => Math.round(n * 1000) / 1000;

/** Runs one benchmark file under Node with the workspace's TypeScript sources; resolves its JSON line. */
function runBench(name, file, argv) {
  const nodeArgs = ['--no-node-snapshot', '--conditions=@rookery/source', '--import', 'tsx', file, ...argv];
  log(`${name}: node ${nodeArgs.slice(3).join(' ')}`);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code !== 0) {
        reject(new Error(`${name} failed (exit ${code ?? signal}): its stderr above says why`));
        return;
      }
      const last = stdout.trim().split('\n').at(-1) ?? '';
      try {
        const result = JSON.parse(last);
        log(`${name}: done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
        resolve(result);
      } catch {
        reject(new Error(`${name} printed no JSON line last: ${JSON.stringify(last.slice(-300))}`));
      }
    });
  });
}

const latency = (rookery, postgres) => ({ rookery, postgres, ratio: round(postgres / rookery) });
const throughput = (rookery, postgres) => ({ rookery, postgres, ratio: round(rookery / postgres) });

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], {
    cwd: root,
    encoding: 'utf8',
  }).stdout.trim();
  const loadBefore = loadavg();
  log(`load average before: ${loadBefore.join(', ')} on ${os.cpus().length} cpus`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rookery-bench-vs-postgres-'));
  const docsDir = path.join(work, 'docs');
  const same = ['--docs', String(args.docs), '--seed', String(args.seed)];
  try {
    const queries = await runBench('queries', 'packages/engine/bench/vs-postgres-queries.ts', [
      ...same,
      '--iterations',
      String(args.iterations),
      '--queries',
      String(args.queries),
      '--dir',
      docsDir,
    ]);
    const build = (index) =>
      runBench(`index-build ${index}`, 'packages/engine/bench/index-build.ts', [
        '--docs-dir',
        docsDir,
        '--index',
        index,
        '--postgres',
        'true',
        '--rounds',
        '1',
      ]);
    const map = await build('map');
    const mapreduce = await build('mapreduce');
    fs.rmSync(docsDir, { recursive: true, force: true });
    const suggest = await runBench('suggest', 'packages/engine/bench/vs-postgres-suggest.ts', same);
    const writes = await runBench('writes', 'services/tenant/bench/vs-postgres-writes.ts', [
      '--seed',
      String(args.seed),
      '--puts',
      String(args.puts),
      '--bulk',
      String(args.bulk),
    ]);

    const rows = {
      ...queries.rows,
      suggest_p50_ms: latency(suggest.query_rookery_p50_ms, suggest.query_postgres_knn_p50_ms),
      suggest_p99_ms: latency(suggest.query_rookery_p99_ms, suggest.query_postgres_knn_p99_ms),
      suggest_ids_p50_ms: latency(suggest.ids_rookery_p50_ms, suggest.ids_postgres_knn_p50_ms),
      suggest_ids_p99_ms: latency(suggest.ids_rookery_p99_ms, suggest.ids_postgres_knn_p99_ms),
      index_map_docs_per_s: throughput(map.median_docs_per_s, map.postgres_median_docs_per_s),
      index_mapreduce_docs_per_s: throughput(
        mapreduce.median_docs_per_s,
        mapreduce.postgres_median_docs_per_s,
      ),
      put_per_s: throughput(writes.put_per_s.rookery, writes.put_per_s.postgres),
      bulk_per_s: throughput(writes.bulk_per_s.rookery, writes.bulk_per_s.postgres),
    };
    const ahead = Object.values(rows).filter((r) => r.ratio > 1).length;
    log(`Rookery ahead on ${ahead} of ${Object.keys(rows).length} figures`);
    console.log(
      JSON.stringify({
        bench: 'vs-postgres',
        commit,
        docs: args.docs,
        seed: args.seed,
        iterations: args.iterations,
        cold_queries: args.queries,
        mixed_distinct_words: queries.mixed_distinct_words,
        puts: args.puts,
        bulk: args.bulk,
        machine: {
          cpus: os.cpus().length,
          model: os.cpus()[0]?.model,
          mem_gib: Math.round(os.totalmem() / 2 ** 30),
          node: process.version,
          postgres: queries.postgres_version,
          postgres_select1_p50_ms: queries.postgres_select1_p50_ms,
          loadavg_before: loadBefore,
          loadavg_after: loadavg(),
        },
        rookery_ahead: `${ahead}/${Object.keys(rows).length}`,
        rows,
      }),
    );
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`bench:vs-postgres: ${error.message}\n`);
  process.exit(1);
});
