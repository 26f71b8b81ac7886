// A backup's manifest: what the backup holds (the mirror generation, the transaction range, each
// file with its SHA-256 before and after sealing) and which backup it continues. It is stored as an
// envelope: the manifest's JSON text, an HMAC-SHA256 over exactly that text under the tenant's
// manifest key, and the key's id in the clear. The key id tells "another key" (BackupKeyMismatch)
// from "altered" (BackupCorrupt); the MAC makes every field, chain references included, as
// trustworthy as the key.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { BackupIdSchema, BackupKindSchema, RookeryError } from '@rookery/protocol';
import { z } from 'zod';
import { type BackupKey, manifestKey } from './backup-key.js';

const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/);
const TxidSchema = z.number().int().min(0);

export const BACKUP_FILES = ['snapshot.rkb', 'transactions.rkb'] as const;
/** An index snapshot's file: `index-<n>.rkb`, numbered in the order of the manifest's `indexes`. */
const IndexFileNameSchema = z.string().regex(/^index-\d{1,4}\.rkb$/) as z.ZodType<`index-${number}.rkb`>;
export type BackupFileName = (typeof BACKUP_FILES)[number] | `index-${number}.rkb`;
export const indexBackupFileName = (n: number): `index-${number}.rkb` => `index-${n}.rkb`;

export const ManifestFileSchema = z
  .object({
    name: z.union([z.enum(BACKUP_FILES), IndexFileNameSchema]),
    plainBytes: z.number().int().min(0),
    plainSha256: Sha256Schema,
    storedBytes: z.number().int().min(0),
    storedSha256: Sha256Schema,
    chunks: z.number().int().min(1),
  })
  .strict();
export type ManifestFile = z.infer<typeof ManifestFileSchema>;

export const BackupManifestSchema = z
  .object({
    format: z.literal('rookery-backup'),
    version: z.literal(1),
    id: BackupIdSchema,
    tenantId: z.string().min(1).max(128),
    /** The database's name in lower case (as the mirror names its directory). */
    database: z.string().min(1).max(64),
    kind: BackupKindSchema,
    createdAt: z.number().int().min(0),
    /** The backup this one continues (incremental), and the SHA-256 of its manifest text. */
    parent: z.object({ id: BackupIdSchema, manifestSha256: Sha256Schema }).strict().nullable(),
    /** The mirror generation the whole chain comes from. */
    generation: z.string().regex(/^[0-9a-z][0-9a-z-]{0,63}$/),
    /** The chain's snapshot (in the full backup that starts it). */
    snapshot: z.object({ txid: TxidSchema, takenAt: z.number().int().min(0) }).strict(),
    /** This backup's transactions are those after `afterTxid`, up to and including `position.txid`. */
    afterTxid: TxidSchema,
    position: z.object({ txid: TxidSchema, committedAt: z.number().int().min(0).nullable() }).strict(),
    /** `gap`: the mirror lacked the transaction after `position` although later ones existed (reported, not hidden). */
    stoppedBy: z.enum(['end', 'gap']),
    /** What the files were compressed with (their headers say it too); brotli: made before Node 24. */
    compression: z.enum(['zstd', 'brotli']),
    encryption: z
      .object({
        algorithm: z.literal('AES-256-GCM'),
        keyVersion: z.number().int().min(1),
        chunkBytes: z.number().int(),
      })
      .strict(),
    files: z.array(ManifestFileSchema),
    /**
     * The index snapshots of the database at this backup's position (docs/mirror.md, "Index
     * snapshots"), with the labels the mirror gave them: each one's file is in this backup, or, when
     * `in` names an earlier backup of the chain, in that one (a copy that did not change since is
     * stored once). A restore lays out those of every backup in the chain beside the snapshot and
     * takes each index from the newest one it can trust, exactly as from the mirror. Empty in
     * backups made before they existed, or made without them.
     */
    indexes: z
      .array(
        z
          .object({
            file: IndexFileNameSchema,
            in: BackupIdSchema.optional(),
            name: z.string().min(1).max(256),
            definitionHash: Sha256Schema,
            etag: z.number().int().min(0),
            txid: TxidSchema,
            takenAt: z.number().int().min(0),
            bytes: z.number().int().min(0),
            sha256: Sha256Schema,
          })
          .strict(),
      )
      .default([]),
  })
  .strict()
  .superRefine((manifest, ctx) => {
    const names = manifest.files.map((f) => f.name);
    if (new Set(names).size !== names.length)
      ctx.addIssue({ code: 'custom', message: 'a file is listed twice' });
    if ((manifest.kind === 'full') !== names.includes('snapshot.rkb'))
      ctx.addIssue({ code: 'custom', message: 'a full backup, and only a full one, holds the snapshot' });
    if ((manifest.kind === 'full') !== (manifest.parent === null))
      ctx.addIssue({
        code: 'custom',
        message: 'an incremental backup, and only an incremental one, has a parent',
      });
    const indexFiles = manifest.indexes.filter((i) => i.in === undefined).map((i) => i.file);
    if (
      new Set(indexFiles).size !== indexFiles.length ||
      indexFiles.some((f) => !names.includes(f)) ||
      names.some((n) => n.startsWith('index-') && !indexFiles.includes(n as `index-${number}.rkb`))
    )
      ctx.addIssue({
        code: 'custom',
        message: 'every index file is listed once among the indexes, and only those',
      });
    if (manifest.position.txid > manifest.afterTxid !== names.includes('transactions.rkb'))
      ctx.addIssue({
        code: 'custom',
        message: 'transactions.rkb must be there exactly when there are transactions',
      });
  });
export type BackupManifest = z.infer<typeof BackupManifestSchema>;

const EnvelopeSchema = z
  .object({
    format: z.literal('rookery-backup-manifest'),
    keyId: z.string().min(1).max(64),
    body: z.string().max(1 << 20),
    mac: z.string().regex(/^[0-9a-f]{64}$/),
  })
  .strict();

/** A manifest as read back: the checked contents and the hash its children refer to it by. */
export interface VerifiedManifest {
  manifest: BackupManifest;
  manifestSha256: string;
}

/** The envelope's JSON text for a manifest, and the hash a later backup will reference it by. */
export function sealManifest(
  manifest: BackupManifest,
  key: BackupKey,
): { text: string; manifestSha256: string } {
  const body = JSON.stringify(BackupManifestSchema.parse(manifest));
  const envelope = { format: 'rookery-backup-manifest', keyId: key.id, body, mac: mac(key, body) };
  return { text: `${JSON.stringify(envelope, null, 1)}\n`, manifestSha256: sha256(body) };
}

/** Checks a stored manifest: BackupKeyMismatch when sealed under another key, BackupCorrupt when altered. */
export function openManifest(text: string, key: BackupKey, where: string): VerifiedManifest {
  const envelope = EnvelopeSchema.safeParse(parseJson(text));
  if (!envelope.success) throw corrupt(where, 'it is not a backup manifest');
  const { keyId, body } = envelope.data;
  if (keyId !== key.id) {
    throw new RookeryError(
      'BackupKeyMismatch',
      `The ${where} was encrypted with another key (key id ${keyId}) than tenant ${key.tenantId}'s backup key (key id ${key.id}, version ${key.version}). Restore it with the master key and tenant it was made with.`,
      { keyId, expectedKeyId: key.id },
    );
  }
  const expected = Buffer.from(mac(key, body), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(envelope.data.mac, 'hex'))) {
    throw corrupt(where, 'its manifest fails authentication (it was altered)');
  }
  const manifest = BackupManifestSchema.safeParse(parseJson(body));
  if (!manifest.success)
    throw corrupt(where, `its manifest is not valid (${z.prettifyError(manifest.error)})`);
  return { manifest: manifest.data, manifestSha256: sha256(body) };
}

function mac(key: BackupKey, body: string): string {
  return createHmac('sha256', manifestKey(key)).update(body, 'utf8').digest('hex');
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function corrupt(where: string, why: string): RookeryError {
  return new RookeryError(
    'BackupCorrupt',
    `The ${where} cannot be restored: ${why}. Nothing was restored; restore from another backup.`,
    { backup: where },
  );
}
