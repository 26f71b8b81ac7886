// Each tenant's backups are encrypted under a key of its own, derived from the deployment's master
// key (the file @rookery/pki's loadOrCreateMasterKey keeps beside the data) with HKDF-SHA256 and
// the tenant id. Derived rather than stored: every worker computes the same key with nothing to
// look up, and there is no per-tenant key store that could be lost while its backups live on.
// The version goes into the derivation, so a tenant's key can be rotated by bumping it (manifests
// record theirs); deleting a tenant's keys to shred its backups would need stored keys instead.
import { createHmac, hkdfSync } from 'node:crypto';

export const BACKUP_KEY_VERSION = 1;

export interface BackupKey {
  tenantId: string;
  version: number;
  /** 32 bytes, the root of this tenant's backup keys; never used directly on data. */
  secret: Buffer;
  /**
   * Names the key without revealing it; manifests carry it in the clear, so a restore with
   * another key is told apart from a damaged manifest.
   */
  id: string;
}

export function deriveBackupKey(
  masterKey: Buffer,
  tenantId: string,
  version = BACKUP_KEY_VERSION,
): BackupKey {
  const secret = hkdf(masterKey, 'rookery-backup-tenant-key', `tenant:${tenantId}\0version:${version}`);
  const id = createHmac('sha256', secret).update('rookery backup key id').digest('hex').slice(0, 24);
  return { tenantId, version, secret, id };
}

/** The key that authenticates manifests: separate from the file keys, so neither use weakens the other. */
export function manifestKey(key: BackupKey): Buffer {
  return hkdf(key.secret, '', 'rookery backup manifest');
}

/** One key per file, from the file's own random salt: chunk nonces can then simply count from zero. */
export function fileKey(key: BackupKey, salt: Buffer): Buffer {
  return hkdf(key.secret, salt, 'rookery backup file');
}

function hkdf(secret: Buffer, salt: string | Buffer, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, salt, info, 32));
}
