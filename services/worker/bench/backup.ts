// pnpm bench:backup [--documents N] [--rounds N] [--level L] — how fast a backup reads a
// database's mirror (compressing, encrypting and writing as it goes) and how fast a restore turns
// the backup back into a database.
//
// A database of NuGet-like package documents (@rookery/datagen, ~1 KB each) is mirrored; a
// snapshot is taken two thirds of the way, so the mirror holds a snapshot and segments after it
// (what a full backup reads). Then, alternating, `--rounds` full backups into a fresh directory
// and restores of them into a fresh database; medians are reported:
//
// - backup_mb_per_s: mirror bytes read per second of a full backup (snapshot + segments);
// - backup_stored_ratio: bytes stored / bytes read (zstd at `--level`, AES-256-GCM);
// - restore_mb_per_s: mirror bytes restored per second (verify, decrypt, decompress, replay).
//
// `measureBackup(mirrorDirectory)` runs the same measurement on any mirrored database: the mirror
// benchmark (packages/engine/bench/mirror.ts) can call it on its own mirror for its
// backup_mb_per_s. Stages go to stderr; the last stdout line is one JSON object.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { generatePackages } from '@rookery/datagen';
import { Database } from '@rookery/engine';
import { makeTempDir } from '@rookery/testkit';
import { deriveBackupKey } from '../src/backup/backup-key.js';
import { makeBackup } from '../src/backup/make-backup.js';
import { restoreBackup } from '../src/backup/restore-backup.js';
import { DirectoryStorage } from '../src/storage/directory-storage.js';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round2 = (x: number) => Math.round(x * 100) / 100;
const log = (line: Record<string, unknown>) => process.stderr.write(`${JSON.stringify(line)}\n`);

export interface BackupMeasurement {
  backup_mb_per_s: number;
  backup_stored_ratio: number;
  restore_mb_per_s: number;
  mirror_mb: number;
}

/**
 * Full backups of the database mirrored at `mirrorDirectory`, each restored into a new database,
 * `rounds` times; medians. Backups and restores go to a temporary directory removed afterwards.
 */
export async function measureBackup(
  mirrorDirectory: string,
  options: { rounds?: number; level?: number } = {},
): Promise<BackupMeasurement> {
  const rounds = options.rounds ?? 3;
  const key = deriveBackupKey(randomBytes(32), 'bench');
  const backups: number[] = [];
  const restores: number[] = [];
  const ratios: number[] = [];
  let mirrorBytes = 0;
  for (let round = 0; round < rounds; round++) {
    const scratch = makeTempDir('rookery-bench-backup-');
    try {
      const storage = new DirectoryStorage(path.join(scratch.dir, 'backups'));
      let started = performance.now();
      const made = await makeBackup({
        tenantId: 'bench',
        database: 'bench',
        kind: 'full',
        mirrorDirectory,
        storage,
        key,
        settings: { compressionLevel: options.level ?? 3 },
      });
      const backupSeconds = (performance.now() - started) / 1000;
      mirrorBytes = made.bytesRead;
      backups.push(made.bytesRead / 1e6 / backupSeconds);
      ratios.push(made.bytesWritten / made.bytesRead);

      started = performance.now();
      await restoreBackup({
        tenantId: 'bench',
        database: 'bench',
        storage,
        key,
        targetDirectory: path.join(scratch.dir, 'restored'),
        scratchDirectory: path.join(scratch.dir, 'scratch'),
      });
      const restoreSeconds = (performance.now() - started) / 1000;
      restores.push(made.bytesRead / 1e6 / restoreSeconds);
      log({ stage: 'round', round, backup_s: round2(backupSeconds), restore_s: round2(restoreSeconds) });
    } finally {
      scratch.cleanup();
    }
  }
  return {
    backup_mb_per_s: round2(median(backups)),
    backup_stored_ratio: round2(median(ratios)),
    restore_mb_per_s: round2(median(restores)),
    mirror_mb: round2(mirrorBytes / 1e6),
  };
}

async function main(): Promise<void> {
  const arg = (name: string, fallback: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i === -1 ? fallback : process.argv[i + 1]!;
  };
  const documents = Number(arg('documents', '60000'));
  const rounds = Number(arg('rounds', '3'));
  const level = Number(arg('level', '3'));
  const tmp = makeTempDir('rookery-bench-mirror-');
  try {
    const mirrorDirectory = path.join(tmp.dir, 'mirror', 'bench', 'bench');
    const db = Database.create(path.join(tmp.dir, 'local'), 'bench', {
      mirror: { directory: mirrorDirectory, mode: 'async' },
    });
    log({ stage: 'writing', documents });
    let written = 0;
    let batch: { Id: string; Document: Record<string, unknown> }[] = [];
    for (const { id, ...document } of generatePackages({ seed: 42, packageVersions: documents })) {
      batch.push({ Id: id, Document: document });
      if (batch.length === 1000) {
        written += await db.insertMany(batch);
        batch = [];
        if (written === Math.floor((documents * 2) / 3 / 1000) * 1000) await db.mirror!.snapshotNow();
      }
    }
    if (batch.length > 0) await db.insertMany(batch);
    await db.close();
    const measured = await measureBackup(mirrorDirectory, { rounds, level });
    process.stdout.write(
      `${JSON.stringify({
        bench: 'backup',
        documents,
        rounds,
        compression_level: level,
        docs_db_mb: round2(fs.statSync(path.join(tmp.dir, 'local', 'docs.db')).size / 1e6),
        ...measured,
      })}\n`,
    );
  } finally {
    tmp.cleanup();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === new URL(import.meta.url).pathname) await main();
