// When the indexer copies an index to the mirror (see mirror/index-snapshots.ts for what a copy is
// and why it can be trusted). The indexer takes them, not the tenant: it is the index file's only
// writer, so it knows the quiet points (every index caught up, no batch in flight) and copies with
// the online backup from its own connection, which costs a page copy per page and nothing on the
// tenant's request path. A copy is due once an index, caught up, has moved `everyEtags` etags past
// its last one, or `everyMs` after it with anything new; a new generation (which has none) gets one
// at the first quiet point.
import type { IndexDefinition } from '@rookery/protocol';
import type BetterSqlite3 from 'better-sqlite3';
import {
  definitionHash,
  type IndexSnapshotEntry,
  listIndexSnapshots,
  takeIndexSnapshot,
} from '../mirror/index-snapshots.js';
import { generationDir, listGenerations, readLocalState } from '../mirror/layout.js';

export interface IndexSnapshotPolicy {
  /** This database's directory on the mirror (`<ROOKERY_MIRROR>/<tenant>/<database>`). */
  mirrorDirectory: string;
  /** A caught-up index is copied once it moved this many etags past its last copy… */
  everyEtags?: number;
  /** …or this long after it, if it moved at all. */
  everyMs?: number;
  now?: () => number;
}

export const DEFAULT_INDEX_SNAPSHOT_ETAGS = 100_000;
export const DEFAULT_INDEX_SNAPSHOT_MS = 60 * 60_000;

interface LastCopy {
  etag: number;
  at: number;
}

export class IndexSnapshotSchedule {
  private readonly everyEtags: number;
  private readonly everyMs: number;
  private readonly now: () => number;
  /** Per generation and index definition (name and hash): the last copy there, from the mirror's listing at first. */
  private readonly last = new Map<string, LastCopy>();
  private generation: string | null = null;

  constructor(
    private readonly databaseDirectory: string,
    private readonly policy: IndexSnapshotPolicy,
  ) {
    this.everyEtags = policy.everyEtags ?? DEFAULT_INDEX_SNAPSHOT_ETAGS;
    this.everyMs = policy.everyMs ?? DEFAULT_INDEX_SNAPSHOT_MS;
    this.now = policy.now ?? Date.now;
  }

  /**
   * Copies the index if a copy is due; null when none is, or when this database is not the one the
   * mirror's newest generation continues (not mirrored yet, or another owner took it over: a copy
   * there could never be restored, and the mirror is no longer ours to write).
   */
  async takeIfDue(
    definition: IndexDefinition,
    lastEtag: number,
    db: BetterSqlite3.Database,
    docsTxid: () => number,
  ): Promise<IndexSnapshotEntry | null> {
    if (lastEtag === 0) return null; // nothing indexed yet: a rebuild costs nothing
    const cached = this.generation;
    const key = `${definition.Name.toLowerCase()}\n${definitionHash(definition)}`;
    const known = cached === null ? undefined : this.last.get(`${cached}\n${key}`);
    if (known && !this.isDue(known, lastEtag)) return null;
    const generation = this.currentGeneration();
    if (generation === null) return null;
    const lastKey = `${generation}\n${key}`;
    const last = this.last.get(lastKey) ?? this.lastOnMirror(generation, definition);
    this.last.set(lastKey, last);
    if (!this.isDue(last, lastEtag)) return null;
    const taken = await takeIndexSnapshot(db, {
      generationDirectory: generationDir(this.policy.mirrorDirectory, generation),
      docsTxid,
      now: this.now,
    });
    this.last.set(lastKey, { etag: taken.etag, at: taken.takenAt });
    return taken;
  }

  private isDue(last: LastCopy, lastEtag: number): boolean {
    if (lastEtag <= last.etag) return false;
    return lastEtag - last.etag >= this.everyEtags || this.now() - last.at >= this.everyMs;
  }

  /** The generation the local docs.db continues, if it is the mirror's newest. */
  private currentGeneration(): string | null {
    const local = readLocalState(this.databaseDirectory)?.generation ?? null;
    const newest = listGenerations(this.policy.mirrorDirectory).at(-1) ?? null;
    this.generation = local !== null && local === newest ? local : null;
    return this.generation;
  }

  /** The newest copy of this definition already in the generation (taken before a restart), or none (-1: due). */
  private lastOnMirror(generation: string, definition: IndexDefinition): LastCopy {
    const hash = definitionHash(definition);
    const newest = listIndexSnapshots(generationDir(this.policy.mirrorDirectory, generation), definition.Name)
      .filter((s) => s.definitionHash === hash)
      .at(-1);
    return newest ? { etag: newest.etag, at: newest.takenAt } : { etag: -1, at: Number.NEGATIVE_INFINITY };
  }
}
