// pnpm bench:mirror [--writers N] [--batches N] [--rounds N] [--mirror-dir DIR] — what the mirror costs the
// write path, how far behind it runs, and how fast a restore reads it back. In one process run,
// side by side (the machine is noisy: the ratios matter more than the absolute figures):
//
// - writes: 64 concurrent writers, each sending 300 single-document batches of ~1 KB documents one
//   after another (like 64 HTTP connections of PUTs: the merger commits whatever is queued, so
//   transactions hold up to 64 documents; synchronous=FULL), on three long-lived databases: not
//   mirrored, mirrored async, mirrored sync. Rounds alternate between them (rotating who goes first) after warm-up rounds;
//   the median per database is reported. Between rounds the async mirror is let catch up, so one
//   round's backlog is not charged to the next database's round.
// - async lag: for every transaction of the measured async rounds, the time from its commit to
//   its record being durable on the mirror; p99.
// - restore: the async database's mirror (its first snapshot, one taken half-way, and every
//   segment after it) restored into an empty directory: mirror bytes read per second. A replay
//   of every segment from the first snapshot is reported beside it (the worst case a snapshot
//   interval allows).
//
// The mirror directory defaults to the same disk as the databases (the worst case: the mirror's
// fsyncs compete with the database's own); production puts it on a network volume.
// - backup: backups are made from the mirror by the worker (services/worker), so its benchmark
//   (`pnpm bench:backup`, a mirrored NuGet-like database) runs as a child and its
//   `backup_mb_per_s` is reported here; the engine does not import a service.
// Stages go to stderr; the last stdout line is one JSON object.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeTempDir } from '@rookery/testkit';
import { Database } from '../src/database.js';
import { restoreDatabase } from '../src/mirror/restore.js';
import { benchDocument } from './bench-document.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1]!;
};
const WRITERS = Number(arg('writers', '64'));
const BATCHES = Number(arg('batches', '300'));
const ROUNDS = Number(arg('rounds', '7'));
const WARMUP_ROUNDS = 3;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? 0;
const log = (line: Record<string, unknown>) => process.stderr.write(`${JSON.stringify(line)}\n`);
const round2 = (x: number) => Math.round(x * 100) / 100;

const document = benchDocument;

/** WRITERS loops of BATCHES sequential single-document batches; documents per second. */
async function concurrentWriters(db: Database, round: number): Promise<number> {
  const started = performance.now();
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; i < BATCHES; i++) {
        await db.batch([{ Type: 'PUT', Id: `packages/${round}-${w}-${i}`, Document: document(i) }]);
      }
    }),
  );
  return (WRITERS * BATCHES) / ((performance.now() - started) / 1000);
}

function directorySize(directory: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(directory, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += fs.statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return total;
}

const tmp = makeTempDir('rookery-bench-mirror-');
const mirrorRoot = fs.mkdtempSync(path.join(arg('mirror-dir', tmp.dir), 'mirror-'));
try {
  log({
    stage: 'start',
    cpus: os.cpus().length,
    writers: WRITERS,
    batches: BATCHES,
    rounds: ROUNDS,
    mirror: mirrorRoot,
  });
  const mirrorOf = (name: string) => path.join(mirrorRoot, name);
  const subjects = [
    { name: 'none', db: Database.create(path.join(tmp.dir, 'none'), 'none') },
    {
      name: 'async',
      db: Database.create(path.join(tmp.dir, 'async'), 'async', {
        mirror: { directory: mirrorOf('async'), mode: 'async' },
      }),
    },
    {
      name: 'sync',
      db: Database.create(path.join(tmp.dir, 'sync'), 'sync', {
        mirror: { directory: mirrorOf('sync'), mode: 'sync' },
      }),
    },
  ];
  const rates = new Map<string, number[]>(subjects.map((s) => [s.name, []]));
  const lags: number[] = [];
  let measuring = false;
  subjects[1]!.db.mirror!.onShipped((shipped) => {
    if (measuring) for (const s of shipped) lags.push(s.lagMs);
  });
  for (const s of subjects) await s.db.mirror?.flushed();

  for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
    const measured = round >= WARMUP_ROUNDS;
    if (round === WARMUP_ROUNDS + Math.floor(ROUNDS / 2)) await subjects[1]!.db.mirror!.snapshotNow();
    const order = subjects.map((_, i) => subjects[(i + round) % subjects.length]!);
    const line: Record<string, unknown> = { stage: measured ? 'round' : 'warm-up', round };
    for (const s of order) {
      measuring = measured && s.name === 'async';
      const rate = await concurrentWriters(s.db, round);
      await s.db.mirror?.flushed();
      measuring = false;
      if (measured) rates.get(s.name)!.push(rate);
      line[s.name] = Math.round(rate);
    }
    log(line);
  }

  const none = median(rates.get('none')!);
  const asyncRate = median(rates.get('async')!);
  const syncRate = median(rates.get('sync')!);
  log({
    stage: 'writes',
    none: Math.round(none),
    async: Math.round(asyncRate),
    sync: Math.round(syncRate),
    async_of_none: round2(asyncRate / none),
    sync_of_none: round2(syncRate / none),
    lag_p50_ms: round2(percentile(lags, 0.5)),
    lag_p99_ms: round2(percentile(lags, 0.99)),
    lag_max_ms: round2(Math.max(...lags)),
    transactions: lags.length,
  });
  await Promise.all(subjects.map((s) => s.db.close()));

  // Restore the async database from its mirror: the newest snapshot and the segments after it...
  const source = path.join(tmp.dir, 'async');
  let started = performance.now();
  const latest = restoreDatabase(mirrorOf('async'), path.join(tmp.dir, 'restored'));
  const restoreSeconds = (performance.now() - started) / 1000;
  const restoredBytes = fs.statSync(path.join(tmp.dir, 'restored', 'docs.db')).size;
  log({
    stage: 'restore',
    mirror_mb: round2(directorySize(mirrorOf('async')) / 1e6),
    read_mb: round2(latest.bytesRead / 1e6),
    seconds: round2(restoreSeconds),
    transactions_replayed: latest.transactionsReplayed,
    restored_db_mb: round2(restoredBytes / 1e6),
    source_db_mb: round2(fs.statSync(path.join(source, 'docs.db')).size / 1e6),
  });
  // ...and, for the worst case, from the first snapshot, replaying every segment: a point in time
  // just before the half-way snapshot forces that base.
  const generation = fs.readdirSync(path.join(mirrorOf('async'), 'generations'))[0]!;
  const snapshots = fs
    .readdirSync(path.join(mirrorOf('async'), 'generations', generation, 'snapshots'))
    .sort();
  const secondTakenAt = Number(snapshots[1]!.slice(17, 32));
  started = performance.now();
  const replay = restoreDatabase(mirrorOf('async'), path.join(tmp.dir, 'replayed'), {
    until: secondTakenAt - 1,
  });
  const replaySeconds = (performance.now() - started) / 1000;
  log({
    stage: 'restore by replay',
    read_mb: round2(replay.bytesRead / 1e6),
    seconds: round2(replaySeconds),
    transactions_replayed: replay.transactionsReplayed,
  });

  log({ stage: 'backup (pnpm bench:backup, as a child)' });
  const repositoryRoot = path.resolve(import.meta.dirname, '..', '..', '..');
  const backupOutput = execFileSync('pnpm', ['-s', 'bench:backup'], {
    cwd: repositoryRoot,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const backup = JSON.parse(backupOutput.trim().split('\n').at(-1)!) as { backup_mb_per_s: number };

  process.stdout.write(
    `${JSON.stringify({
      bench: 'mirror',
      writes_per_s_no_mirror: Math.round(none),
      writes_per_s_async_mirror: Math.round(asyncRate),
      writes_per_s_sync_mirror: Math.round(syncRate),
      async_of_no_mirror: round2(asyncRate / none),
      sync_of_no_mirror: round2(syncRate / none),
      async_lag_p99_ms: round2(percentile(lags, 0.99)),
      restore_mb_per_s: round2(latest.bytesRead / 1e6 / restoreSeconds),
      restore_replay_mb_per_s: round2(replay.bytesRead / 1e6 / replaySeconds),
      backup_mb_per_s: backup.backup_mb_per_s,
    })}\n`,
  );
} finally {
  fs.rmSync(mirrorRoot, { recursive: true, force: true });
  tmp.cleanup();
}
