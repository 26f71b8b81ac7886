// The backups of one database in a storage:
//
//   <tenant>/<database>/<backup id>/snapshot.rkb        (full backups)
//   <tenant>/<database>/<backup id>/transactions.rkb    (when it holds transactions)
//   <tenant>/<database>/<backup id>/manifest.json       written last: a backup exists once this does
//
// Backup ids start with their creation time, so name order is time order, and say their kind, so
// the scheduler can tell when the last full backup was made from a listing alone.
import { randomBytes } from 'node:crypto';
import { BackupIdSchema, type BackupKind, RookeryError } from '@rookery/protocol';
import type { BackupStorage } from '../storage/backup-storage.js';
import type { BackupKey } from './backup-key.js';
import { type BackupFileName, openManifest, type VerifiedManifest } from './manifest.js';

export const MANIFEST_FILE = 'manifest.json';
/** Manifests are small; anything bigger is not one. */
const MAX_MANIFEST_BYTES = 2 << 20;

export interface BackupRef {
  id: string;
  kind: BackupKind;
  createdAt: number;
}

export interface DatabaseBackups {
  /** Backups whose manifest was written, oldest first. */
  complete: BackupRef[];
  /** Backups that were started but never finished (an attempt that died): safe to delete. */
  incomplete: string[];
}

export function newBackupId(createdAt: number, kind: BackupKind): string {
  return `${String(createdAt).padStart(15, '0')}-${kind}-${randomBytes(4).toString('hex')}`;
}

export function parseBackupId(id: string): BackupRef | null {
  if (!BackupIdSchema.safeParse(id).success) return null;
  const [time = '', kind = ''] = id.split('-');
  return { id, kind: kind as BackupKind, createdAt: Number(time) };
}

export class BackupCatalog {
  constructor(
    readonly storage: BackupStorage,
    readonly tenantId: string,
    database: string,
  ) {
    this.database = database.toLowerCase();
  }

  readonly database: string;

  get prefix(): string {
    return `${this.tenantId}/${this.database}/`;
  }

  keyOf(id: string, file: BackupFileName | typeof MANIFEST_FILE): string {
    return `${this.prefix}${id}/${file}`;
  }

  /**
   * A backup, for messages. They reach tenants (a failed job's lastError), so they name the backup,
   * never the storage's location (a server path or bucket), which the worker's log has.
   */
  describe(id: string): string {
    return `backup ${id} of ${this.tenantId}/${this.database}`;
  }

  async list(): Promise<DatabaseBackups> {
    const files = new Map<string, Set<string>>();
    for (const key of await this.storage.list(this.prefix)) {
      const [id, file, ...deeper] = key.slice(this.prefix.length).split('/');
      if (!id || !file || deeper.length > 0 || !parseBackupId(id)) continue;
      files.set(id, (files.get(id) ?? new Set()).add(file));
    }
    const complete: BackupRef[] = [];
    const incomplete: string[] = [];
    for (const [id, names] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (names.has(MANIFEST_FILE)) complete.push(parseBackupId(id)!);
      else incomplete.push(id);
    }
    return { complete, incomplete };
  }

  async removeIncomplete(ids: readonly string[]): Promise<void> {
    for (const id of ids) await this.storage.removeAll(`${this.prefix}${id}/`);
  }

  /** Reads and checks a backup's manifest (see manifest.ts); the manifest must name this backup. */
  async manifest(id: string, key: BackupKey): Promise<VerifiedManifest> {
    const where = this.describe(id);
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const piece of this.storage.read(this.keyOf(id, MANIFEST_FILE))) {
      bytes += piece.length;
      if (bytes > MAX_MANIFEST_BYTES) throw corruptAt(where, 'its manifest is too large');
      chunks.push(piece);
    }
    const verified = openManifest(Buffer.concat(chunks).toString('utf8'), key, where);
    const { manifest } = verified;
    if (manifest.id !== id || manifest.tenantId !== this.tenantId || manifest.database !== this.database) {
      throw corruptAt(
        where,
        `its manifest describes backup ${manifest.id} of ${manifest.tenantId}/${manifest.database}, not this one`,
      );
    }
    return verified;
  }
}

function corruptAt(where: string, why: string): RookeryError {
  return new RookeryError('BackupCorrupt', `The ${where} cannot be used: ${why}.`, {
    backup: where,
  });
}
