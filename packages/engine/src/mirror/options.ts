import { z } from 'zod';
import { MAX_EPOCH } from './layout.js';

/** `off`: not mirrored. `async`: acknowledged after the local commit. `sync`: acknowledged once the mirror has it. */
export const MirrorModeSchema = z.enum(['off', 'async', 'sync']);
export type MirrorMode = z.infer<typeof MirrorModeSchema>;

const MiB = 1024 * 1024;

/** How one database is mirrored. Parsed at the boundary (the tenant's config builds it from the environment). */
export const MirrorOptionsSchema = z.object({
  /** This database's directory on the mirror (`<ROOKERY_MIRROR>/<tenant>/<database>`). */
  directory: z.string().min(1),
  mode: z.enum(['async', 'sync']),
  /**
   * The placement epoch of this owner (docs/scale-out.md): its generations carry it, a restore picks
   * the highest, and an owner that sees a higher one on the mirror is fenced (ships and acknowledges
   * nothing more). 0 on one machine, where there is only ever one owner.
   */
  epoch: z.number().int().min(0).max(MAX_EPOCH).default(0),
  /** A segment file is closed and the next one started once it holds this many bytes. */
  segmentBytes: z
    .number()
    .int()
    .min(4096)
    .default(16 * MiB),
  /** A snapshot is taken once this many bytes of segments were written since the last one… */
  snapshotEveryBytes: z
    .number()
    .int()
    .min(MiB)
    .default(256 * MiB),
  /** …or this long after the last one, if anything was written meanwhile. */
  snapshotEveryMs: z
    .number()
    .int()
    .min(1000)
    .default(60 * 60_000),
  /** Point-in-time restores reach this far back; older snapshots and segments are deleted. */
  retentionMs: z
    .number()
    .int()
    .min(0)
    .default(7 * 24 * 60 * 60_000),
  /**
   * Async mode writes and fsyncs the mirror at most this often, so a busy database does not double
   * its fsyncs; the lag this adds is bounded by it. Sync mode writes as soon as it can.
   */
  flushIntervalMs: z.number().int().min(0).max(10_000).default(50),
  /**
   * Async mode holds acknowledgments while the oldest transaction not yet on the mirror is older
   * than this (the mirror is slower than the writes), so the lag stays bounded. A write is never
   * failed for it: after `confirmTimeoutMs` it is acknowledged anyway.
   */
  maxLagMs: z.number().int().min(10).default(1000),
  /** Sync mode fails an acknowledgment with MirrorUnavailable when the mirror has not confirmed in time. */
  confirmTimeoutMs: z.number().int().min(100).default(10_000),
  /** Transactions held in memory while the mirror is unreachable; past this the chain is broken and a new generation starts later. */
  maxQueueBytes: z
    .number()
    .int()
    .min(MiB)
    .default(256 * MiB),
});
export type MirrorOptions = z.input<typeof MirrorOptionsSchema>;
export type ResolvedMirrorOptions = z.output<typeof MirrorOptionsSchema>;

/** The subset of pino's logger the mirror uses, so the engine does not depend on pino itself. */
export interface MirrorLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export const silentLogger: MirrorLogger = { info() {}, warn() {}, error() {} };
