// pnpm bench:restore-indexes [--documents N] [--after N]
//
// How long a restored tenant answers stale queries: from the start of a restore from the mirror to the
// moment every index has caught up (the first non-stale answer of every index), for a NuGet-like
// database (@rookery/datagen) with the benchmarks' two indexes (packages/engine/bench/nuget-indexes.ts:
// the five-field map with a full-text field, and the map/reduce search index), either
//
// - rebuilt from their definitions (what every restore did before index snapshots), or
// - restored from the index snapshots the indexer copied to the mirror, then caught up with the
//   `--after` documents written after the copy.
//
// Both run the indexer as the tenant's indexer process does (DatabaseIndexer.step() with its prepare
// thread). It also reports what a copy costs the host where it is taken (the indexer's online backup,
// wall and CPU time, per index) against SQLite's VACUUM INTO of the same index, the alternative; and what
// building the two indexes new over the `--documents` costs the host's processes (tenant + indexer, from
// /proc) beside the tenant vs on a worker (services/host/bench/new-index-cpu.ts: real tenant, queue and
// worker processes), until every index answers non-stale.
//
// Stages go to stderr; the last stdout line is one JSON object.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { generatePackages } from '@rookery/datagen';
import { Database, DatabaseIndexer, PrepareThread, restoreDatabase } from '@rookery/engine';
import type { IndexDefinition } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { z } from 'zod';
import { BY_FIELDS_INDEX, SEARCH_INDEX } from '../../../packages/engine/bench/nuget-indexes.js';
import { measureNewIndexHostCpu } from '../../host/bench/new-index-cpu.js';

const ArgsSchema = z
  .object({
    documents: z.coerce.number().int().min(1_000).max(10_000_000).default(100_000),
    after: z.coerce.number().int().min(0).max(1_000_000).default(1_000),
  })
  .strict();
const { values } = parseArgs({ options: { documents: { type: 'string' }, after: { type: 'string' } } });
const args = ArgsSchema.parse(values);
const DEFINITIONS: IndexDefinition[] = [BY_FIELDS_INDEX, SEARCH_INDEX];
const CHUNK = 5_000;
const log = (line: Record<string, unknown>) => process.stderr.write(`${JSON.stringify(line)}\n`);
const cpuSeconds = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1e6;
};

async function insert(db: Database, documents: Iterable<{ id: string }>): Promise<void> {
  let chunk: { Id: string; Document: Record<string, unknown> }[] = [];
  for (const doc of documents) {
    const { id, ...body } = doc;
    chunk.push({ Id: id, Document: body as Record<string, unknown> });
    if (chunk.length === CHUNK) {
      await db.insertMany(chunk);
      chunk = [];
    }
  }
  if (chunk.length > 0) await db.insertMany(chunk);
}

/** Runs the indexer until every index has caught up with docs.db: from then on every index answers non-stale. */
async function catchUp(indexer: DatabaseIndexer): Promise<void> {
  for (;;) {
    const progress = await indexer.step();
    if (progress.length === 0) return;
    if (progress.every((p) => p.documents === 0 && p.errors > 0)) throw new Error('indexing failed');
  }
}

async function main(): Promise<void> {
  const tmp = makeTempDir('rookery-bench-restore-indexes-');
  const prepareThread = new PrepareThread();
  try {
    const source = path.join(tmp.dir, 'source');
    const mirror = path.join(tmp.dir, 'mirror');
    // One snapshot of docs.db at the start; the documents reach the mirror as segments after it.
    const db = Database.create(source, 'nuget', { mirror: { directory: mirror, mode: 'async' } });
    for (const definition of DEFINITIONS) await db.putIndexDefinition(definition);
    log({ stage: 'insert', documents: args.documents });
    const all = [...generatePackages({ seed: 42, packageVersions: args.documents + args.after })];
    await insert(db, all.slice(0, args.documents));

    log({ stage: 'index', indexes: DEFINITIONS.map((d) => d.Name) });
    const indexer = new DatabaseIndexer(source, {
      prepareThread,
      snapshots: { mirrorDirectory: mirror, everyEtags: 1 },
    });
    for (const definition of DEFINITIONS) indexer.put(definition);
    await catchUp(indexer);
    await db.mirror!.flushed();

    log({ stage: 'copy the indexes to the mirror' });
    const wallStarted = performance.now();
    const cpuStarted = cpuSeconds();
    const copies = await indexer.snapshotDue();
    const copyMs = performance.now() - wallStarted;
    const copyCpuS = cpuSeconds() - cpuStarted;
    if (copies.length !== DEFINITIONS.length)
      throw new Error(`expected ${DEFINITIONS.length} copies, got ${copies.length}`);
    indexer.close();
    // The alternative: VACUUM INTO of the same files (what it would cost the host instead).
    const vacuumStarted = performance.now();
    const vacuumCpuStarted = cpuSeconds();
    for (const file of fs.readdirSync(path.join(source, 'indexes')).filter((f) => f.endsWith('.db'))) {
      // Node's own SQLite: the worker does not depend on better-sqlite3, and VACUUM INTO costs the same in either.
      const index = new DatabaseSync(path.join(source, 'indexes', file), { readOnly: true });
      index.exec(`VACUUM INTO '${path.join(tmp.dir, `vacuum-${file}`).replaceAll("'", "''")}'`);
      index.close();
    }
    const vacuumMs = performance.now() - vacuumStarted;
    const vacuumCpuS = cpuSeconds() - vacuumCpuStarted;

    // Written after the copies: the restored indexes catch up with these.
    await insert(db, all.slice(args.documents));
    await db.close();

    const restore = async (indexes: boolean) => {
      const target = path.join(tmp.dir, indexes ? 'restored-snapshot' : 'restored-rebuild');
      const started = performance.now();
      const restored = restoreDatabase(mirror, target, { indexes });
      const restoredMs = performance.now() - started;
      const restoredIndexer = new DatabaseIndexer(target, { prepareThread });
      // What the tenant does when it opens a restored database: a definition without its file is built.
      for (const definition of DEFINITIONS)
        if (!restoredIndexer.names.includes(definition.Name)) restoredIndexer.put(definition);
      await catchUp(restoredIndexer);
      const ms = performance.now() - started;
      restoredIndexer.close();
      log({
        stage: indexes ? 'restore with index snapshots' : 'restore, indexes rebuilt',
        docs_restore_ms: Math.round(restoredMs),
        to_nonstale_ms: Math.round(ms),
        from_snapshots: restored.indexes.restored.map((r) => r.name),
      });
      if (indexes && restored.indexes.restored.length !== DEFINITIONS.length)
        throw new Error('snapshots not used');
      return ms;
    };
    const rebuildMs = await restore(false);
    const snapshotMs = await restore(true);
    const indexMb = copies.reduce((sum, c) => sum + c.bytes, 0) / 1e6;
    log({ stage: 'new indexes: host CPU, built beside the tenant vs by a worker' });
    const newIndex = await measureNewIndexHostCpu({
      directory: path.join(tmp.dir, 'new-index'),
      documents: all.slice(0, args.documents),
      definitions: DEFINITIONS,
      log,
    });
    console.log(
      JSON.stringify({
        documents: args.documents,
        written_after_snapshot: args.after,
        indexes: DEFINITIONS.map((d) => d.Name),
        restore_to_nonstale_ms_rebuild: Math.round(rebuildMs),
        restore_to_nonstale_ms_snapshot: Math.round(snapshotMs),
        speedup: Math.round((rebuildMs / snapshotMs) * 10) / 10,
        index_snapshot_mb: Math.round(indexMb * 10) / 10,
        snapshot_backup_ms: Math.round(copyMs),
        snapshot_backup_cpu_s: Math.round(copyCpuS * 100) / 100,
        snapshot_vacuum_into_ms: Math.round(vacuumMs),
        snapshot_vacuum_into_cpu_s: Math.round(vacuumCpuS * 100) / 100,
        ...newIndex,
        host_cpu_worker_of_local:
          Math.round((newIndex.host_cpu_s_new_index_worker / newIndex.host_cpu_s_new_index_local) * 1000) /
          1000,
        machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model ?? 'unknown', node: process.version },
      }),
    );
  } finally {
    await prepareThread.close();
    tmp.cleanup();
  }
}

await main();
