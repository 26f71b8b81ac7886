// The measurement behind docs/mirror.md's choice: what shipping each committed transaction to a
// mirror directory costs the write path, for the two designs considered.
//
//   logical   the transaction's recorded statements, encoded as one record (what Rookery ships);
//   wal       Litestream's way: after each commit, read the WAL frames it appended (up to the last
//             commit frame, following the WAL across restarts by its salts) and ship those bytes.
//
// Both hand their bytes to the same appender (writev + fdatasync, one write in flight, everything
// queued meanwhile goes in the next one, at most one fdatasync per --flush-ms), so only the capture
// differs. The WAL prototype reads the
// frames synchronously right after the commit, before the next transaction can restart the WAL:
// that is its best case (no separate checkpoint control, no shadow WAL).
//
// Workloads, each on its own long-lived database per variant, rounds alternating between variants
// so machine noise hits all alike: 5,000 concurrent single-document batches of ~1 KB documents,
// 5,000-document bulk chunks, and single-document batches one after another (a commit each). Stages go to stderr; the last stdout line is one JSON object.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeTempDir } from '@rookery/testkit';
import { type CommitHook, Database } from '../src/database.js';
import { encodeRecord } from '../src/mirror/record.js';
import { arg } from './args.js';
import { benchDocument } from './bench-document.js';

const ROUNDS = arg('rounds', 5);
const WARMUP_ROUNDS = 2;
const BATCHES = arg('batches', 5_000);
const BULK_DOCS = 20_000;
const BULK_CHUNK = 5_000;
const SEQUENTIAL = 300;
/** Async mirroring need not fsync the mirror at every commit: at most once per this many ms (lag stays bounded). */
const FLUSH_INTERVAL_MS = arg('flush-ms', 50);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? 0;
const log = (line: Record<string, unknown>) => process.stderr.write(`${JSON.stringify(line)}\n`);

const document = benchDocument;

/** Appends buffers to one file: one writev + fdatasync in flight, the rest queued for the next. */
class Appender {
  private queue: { data: Buffer; at: number }[] = [];
  private writing = false;
  private idle: (() => void)[] = [];
  readonly lags: number[] = [];
  bytes = 0;

  constructor(private readonly fd: number) {}

  push(data: Buffer): void {
    this.queue.push({ data, at: performance.now() });
    this.bytes += data.length;
    if (!this.writing) void this.pump();
  }

  drained(): Promise<void> {
    if (!this.writing && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private async pump(): Promise<void> {
    this.writing = true;
    let lastFlush = 0;
    while (this.queue.length > 0) {
      const wait = lastFlush + FLUSH_INTERVAL_MS - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      lastFlush = performance.now();
      const batch = this.queue.splice(0);
      await new Promise<void>((resolve, reject) =>
        fs.writev(
          this.fd,
          batch.map((b) => b.data),
          (error) => (error ? reject(error) : resolve()),
        ),
      );
      await new Promise<void>((resolve, reject) =>
        fs.fdatasync(this.fd, (error) => (error ? reject(error) : resolve())),
      );
      const now = performance.now();
      for (const b of batch) this.lags.push(now - b.at);
    }
    this.writing = false;
    for (const wake of this.idle.splice(0)) wake();
  }
}

/** Follows docs.db-wal and returns the frames appended since the last call, up to the last commit frame. */
class WalTail {
  private offset = 32;
  private salts = '';
  private readonly header = Buffer.alloc(32);

  constructor(private readonly fd: number) {}

  read(): Buffer | null {
    if (fs.readSync(this.fd, this.header, 0, 32, 0) < 32) return null;
    const pageSize = this.header.readUInt32BE(8);
    const salt1 = this.header.readUInt32BE(16);
    const salt2 = this.header.readUInt32BE(20);
    if (`${salt1}:${salt2}` !== this.salts) {
      // The WAL restarted after a checkpoint: new frames are written from the start again.
      this.salts = `${salt1}:${salt2}`;
      this.offset = 32;
    }
    const frameSize = 24 + pageSize;
    const parts: Buffer[] = [];
    let scanned = 0;
    let lastCommitEnd = 0;
    for (;;) {
      // Frames of an older WAL cycle follow the current ones: read in chunks and stop at the first stale salt.
      const chunk = Buffer.allocUnsafe(frameSize * 64);
      const read = fs.readSync(this.fd, chunk, 0, chunk.length, this.offset + scanned);
      let at = 0;
      let stale = false;
      for (; at + frameSize <= read; at += frameSize) {
        if (chunk.readUInt32BE(at + 8) !== salt1 || chunk.readUInt32BE(at + 12) !== salt2) {
          stale = true;
          break;
        }
        if (chunk.readUInt32BE(at + 4) !== 0) lastCommitEnd = scanned + at + frameSize;
      }
      parts.push(chunk.subarray(0, at));
      scanned += at;
      if (stale || read < chunk.length) break;
    }
    if (lastCommitEnd === 0) return null;
    this.offset += lastCommitEnd;
    return Buffer.concat(parts).subarray(0, lastCommitEnd);
  }
}

type Variant = 'none' | 'logical' | 'wal';
interface Subject {
  variant: Variant;
  db: Database;
  appender: Appender | null;
}

function open(root: string, variant: Variant): Subject {
  const directory = path.join(root, variant);
  const fd = fs.openSync(path.join(root, `${variant}.mirror`), 'w');
  const appender = variant === 'none' ? null : new Appender(fd);
  let hook: CommitHook | undefined;
  if (variant === 'logical') {
    hook = (c) => {
      appender!.push(encodeRecord(c.txid, c.committedAt, c.schema, c.ops));
      return undefined;
    };
  } else if (variant === 'wal') {
    let tail: WalTail | null = null;
    hook = () => {
      tail ??= new WalTail(fs.openSync(path.join(directory, 'docs.db-wal'), 'r'));
      const frames = tail.read();
      if (frames) appender!.push(frames);
      return undefined;
    };
  }
  const db = Database.create(directory, variant, { commitHook: hook });
  return { variant, db, appender };
}

async function concurrentBatches(subject: Subject, round: number): Promise<number> {
  const started = performance.now();
  await Promise.all(
    Array.from({ length: BATCHES }, (_, i) =>
      subject.db.batch([{ Type: 'PUT', Id: `packages/${round}-${i}`, Document: document(i) }]),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  await subject.appender?.drained();
  return BATCHES / seconds;
}

/** One single-document batch after another: one commit each, the case where a WAL frame is a whole page. */
async function sequentialBatches(subject: Subject, round: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < SEQUENTIAL; i++) {
    await subject.db.batch([{ Type: 'PUT', Id: `seq/${round}-${i}`, Document: document(i) }]);
  }
  const seconds = (performance.now() - started) / 1000;
  await subject.appender?.drained();
  return SEQUENTIAL / seconds;
}

async function bulk(subject: Subject, round: number): Promise<number> {
  const started = performance.now();
  for (let from = 0; from < BULK_DOCS; from += BULK_CHUNK) {
    const lines = Array.from({ length: BULK_CHUNK }, (_, j) => ({
      Id: `bulk/${round}-${from + j}`,
      Document: document(from + j),
    }));
    await subject.db.insertMany(lines);
  }
  const seconds = (performance.now() - started) / 1000;
  await subject.appender?.drained();
  return BULK_DOCS / seconds;
}

async function measure(
  subjects: Subject[],
  run: (s: Subject, round: number) => Promise<number>,
  docsPerRound: number,
  stage: string,
) {
  const rates = new Map<Variant, number[]>(subjects.map((s) => [s.variant, []]));
  const bytesBefore = new Map(subjects.map((s) => [s.variant, 0]));
  for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
    if (round === WARMUP_ROUNDS) {
      for (const s of subjects) {
        bytesBefore.set(s.variant, s.appender?.bytes ?? 0);
        s.appender?.lags.splice(0);
      }
    }
    for (const s of subjects) {
      const rate = await run(s, round);
      if (round >= WARMUP_ROUNDS) rates.get(s.variant)!.push(rate);
    }
  }
  const base = median(rates.get('none')!);
  const result: Record<string, number> = {};
  for (const s of subjects) {
    const rate = median(rates.get(s.variant)!);
    result[`${s.variant}_docs_per_s`] = Math.round(rate);
    if (s.appender) {
      const shipped = s.appender.bytes - bytesBefore.get(s.variant)!;
      result[`${s.variant}_of_none`] = Number((rate / base).toFixed(3));
      result[`${s.variant}_bytes_per_doc`] = Math.round(shipped / (docsPerRound * ROUNDS));
      result[`${s.variant}_lag_p99_ms`] = Number(percentile(s.appender.lags, 0.99).toFixed(1));
    }
  }
  log({ stage, ...result });
  return result;
}

const tmp = makeTempDir('rookery-mirror-choice-');
try {
  log({ stage: 'start', cpus: os.cpus().length, rounds: ROUNDS });
  const variants: Variant[] = ['none', 'logical', 'wal'];
  const subjects = variants.map((v) => open(tmp.dir, v));
  const batches = await measure(subjects, concurrentBatches, BATCHES, 'concurrent single-document batches');
  const bulkResult = await measure(subjects, bulk, BULK_DOCS, 'bulk chunks of 5,000');
  const sequential = await measure(
    subjects,
    sequentialBatches,
    SEQUENTIAL,
    'sequential single-document batches',
  );
  await Promise.all(subjects.map((s) => s.db.close()));
  const prefixed = (prefix: string, r: Record<string, number>) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [`${prefix}_${k}`, v]));
  process.stdout.write(
    `${JSON.stringify({ bench: 'mirror-choice', ...prefixed('batches', batches), ...prefixed('bulk', bulkResult), ...prefixed('sequential', sequential) })}\n`,
  );
} finally {
  tmp.cleanup();
}
