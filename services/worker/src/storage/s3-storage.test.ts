// S3Storage through the real AWS SDK against a test double of the S3 API (test-fixtures/fake-s3.ts:
// a real S3 cannot run here). The same backups as in backup.test.ts must round-trip through it.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Database } from '@rookery/engine';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deriveBackupKey } from '../backup/backup-key.js';
import { makeBackup } from '../backup/make-backup.js';
import { restoreBackup } from '../backup/restore-backup.js';
import { type FakeS3, startFakeS3 } from '../test-fixtures/fake-s3.js';
import {
  createMirroredDatabase,
  DATABASE,
  documentsOf,
  mirrorDirectoryOf,
  prepareDatabase,
  TENANT,
  writeStep,
} from '../test-fixtures/mirrored-database.js';
import { S3Storage } from './s3-storage.js';

let s3: FakeS3;
let storage: S3Storage;

beforeEach(async () => {
  s3 = await startFakeS3();
  storage = new S3Storage({
    bucket: s3.bucket,
    prefix: 'rookery/backups',
    endpoint: s3.url,
    credentials: s3.credentials,
    partBytes: 5 << 20,
  });
});
afterEach(async () => {
  storage.close();
  await s3.close();
});

async function* pieces(data: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let at = 0; at < data.length; at += size) yield data.subarray(at, at + size);
}

async function readAll(key: string): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const piece of storage.read(key)) out.push(piece);
  return Buffer.concat(out);
}

describe('backups in an S3-compatible bucket', () => {
  it('writes small objects in one request and large ones in parts, lists by prefix across pages, removes', async () => {
    const small = randomBytes(1000);
    const large = randomBytes(12 << 20); // three parts of 5 MiB, the last shorter
    expect(await storage.write('acme/shop/b1/manifest.json', pieces(small, 300))).toBe(small.length);
    expect(await storage.write('acme/shop/b1/snapshot.rkb', pieces(large, 1 << 20))).toBe(large.length);
    await storage.write('acme/shop/b2/manifest.json', pieces(Buffer.alloc(0), 1));
    await storage.write('acme/other/b3/manifest.json', pieces(small, 1000));
    expect(s3.pendingUploads()).toBe(0);
    expect([...s3.objects.keys()].every((k) => k.startsWith('rookery/backups/acme/'))).toBe(true);

    // Buffer.equals: a deep comparison of 12 MiB element by element takes the test's whole timeout.
    expect((await readAll('acme/shop/b1/snapshot.rkb')).equals(large)).toBe(true);
    expect(await readAll('acme/shop/b2/manifest.json')).toEqual(Buffer.alloc(0));
    expect(await storage.list('acme/shop/')).toEqual([
      'acme/shop/b1/manifest.json',
      'acme/shop/b1/snapshot.rkb',
      'acme/shop/b2/manifest.json',
    ]);
    await storage.removeAll('acme/shop/b1/');
    expect(await storage.list('acme/')).toEqual([
      'acme/other/b3/manifest.json',
      'acme/shop/b2/manifest.json',
    ]);
    await expect(readAll('acme/shop/b1/snapshot.rkb')).rejects.toMatchObject({ code: 'BackupNotFound' });
    await expect(readAll('../escape')).rejects.toMatchObject({ code: 'InvalidRequest' });
  });

  it('aborts the multipart upload of a stream that fails, leaving no object', async () => {
    async function* failing(): AsyncGenerator<Buffer> {
      yield randomBytes(6 << 20);
      throw new Error('the mirror went away');
    }
    await expect(storage.write('acme/shop/b9/snapshot.rkb', failing())).rejects.toThrow(
      'the mirror went away',
    );
    expect(s3.pendingUploads()).toBe(0);
    expect(await storage.list('acme/')).toEqual([]);
  });

  it('holds full and incremental backups that restore equal to the source', async () => {
    const tmp = makeTempDir('rookery-s3-backup-');
    const db = createMirroredDatabase(path.join(tmp.dir, 'local'), path.join(tmp.dir, 'mirror'));
    try {
      const key = deriveBackupKey(randomBytes(32), TENANT);
      const backup = (kind: 'full' | 'incremental') =>
        makeBackup({
          tenantId: TENANT,
          database: DATABASE,
          kind,
          mirrorDirectory: mirrorDirectoryOf(path.join(tmp.dir, 'mirror')),
          storage,
          key,
        });
      await prepareDatabase(db);
      await writeStep(db, 0);
      expect((await backup('full')).kind).toBe('full');
      await writeStep(db, 1);
      expect((await backup('incremental')).kind).toBe('incremental');
      const target = path.join(tmp.dir, 'restored');
      const outcome = await restoreBackup({
        tenantId: TENANT,
        database: DATABASE,
        storage,
        key,
        targetDirectory: target,
        scratchDirectory: path.join(tmp.dir, 'scratch'),
      });
      expect(outcome.chain).toHaveLength(2);
      const restored = Database.open(target);
      expect(documentsOf(restored)).toEqual(documentsOf(db));
      await restored.close();
    } finally {
      await db.close();
      tmp.cleanup();
    }
  });
});
