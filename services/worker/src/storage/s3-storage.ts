// Backups in an S3-compatible bucket (AWS S3, or any store that speaks its API: MinIO, R2, Ceph…),
// through the AWS SDK. Objects up to one part are one PutObject; larger ones a multipart upload,
// which S3 makes visible only when completed — so an object is there whole or not at all, as the
// storage interface requires. A failed upload is aborted; one whose writer died is left to the
// bucket's lifecycle rule for incomplete multipart uploads (set one: S3 keeps their parts until
// aborted).
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { rechunk } from '../streams.js';
import { type BackupStorage, keySegments, objectNotFound } from './backup-storage.js';

export interface S3StorageOptions {
  bucket: string;
  /** Key prefix inside the bucket (no leading or trailing "/"); empty: the bucket's root. */
  prefix?: string;
  region?: string;
  /** An S3-compatible service's URL; addressed path-style (`<endpoint>/<bucket>/<key>`). */
  endpoint?: string;
  /** Default: the SDK's chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, profiles, instance roles). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Bytes per uploaded part (S3 needs at least 5 MiB but for the last). */
  partBytes?: number;
}

const DEFAULT_PART_BYTES = 16 << 20;

export class S3Storage implements BackupStorage {
  readonly location: string;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly partBytes: number;

  constructor(options: S3StorageOptions) {
    this.bucket = options.bucket;
    this.prefix = options.prefix ? `${keySegments(options.prefix, 'prefix').join('/')}/` : '';
    this.partBytes = Math.max(5 << 20, options.partBytes ?? DEFAULT_PART_BYTES);
    this.location = `s3://${this.bucket}/${this.prefix}`.replace(/\/$/, '');
    this.client = new S3Client({
      region: options.region ?? 'us-east-1',
      ...(options.endpoint ? { endpoint: options.endpoint, forcePathStyle: true } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
      // Checksums only where S3 requires them: many S3-compatible stores reject the newer
      // x-amz-checksum headers, and every backup file carries its own SHA-256 and GCM tags.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async write(key: string, body: AsyncIterable<Buffer>): Promise<number> {
    const Key = this.objectKey(key);
    const parts = rechunk(body, this.partBytes);
    const first = await parts.next();
    const firstPart = first.done ? Buffer.alloc(0) : first.value;
    const second = first.done ? first : await parts.next();
    if (second.done) {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key, Body: firstPart }));
      return firstPart.length;
    }
    const { UploadId } = await this.client.send(
      new CreateMultipartUploadCommand({ Bucket: this.bucket, Key }),
    );
    const uploaded: { PartNumber: number; ETag: string }[] = [];
    let bytes = 0;
    try {
      const upload = async (part: Buffer) => {
        const PartNumber = uploaded.length + 1;
        const { ETag } = await this.client.send(
          new UploadPartCommand({ Bucket: this.bucket, Key, UploadId, PartNumber, Body: part }),
        );
        uploaded.push({ PartNumber, ETag: ETag ?? '' });
        bytes += part.length;
      };
      await upload(firstPart);
      await upload(second.value);
      for await (const part of parts) await upload(part);
      await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key,
          UploadId,
          MultipartUpload: { Parts: uploaded },
        }),
      );
    } catch (error) {
      await this.client
        .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId }))
        .catch(() => undefined);
      throw error;
    }
    return bytes;
  }

  async *read(key: string): AsyncIterable<Buffer> {
    let body: AsyncIterable<Uint8Array>;
    try {
      const object = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }),
      );
      body = object.Body as AsyncIterable<Uint8Array>;
    } catch (error) {
      if (error instanceof NoSuchKey) throw objectNotFound(key);
      throw error;
    }
    for await (const piece of body) yield Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let ContinuationToken: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.objectKey(prefix), ContinuationToken }),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key?.startsWith(this.prefix)) keys.push(object.Key.slice(this.prefix.length));
      }
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
    return keys.sort();
  }

  async removeAll(prefix: string): Promise<void> {
    for (const key of await this.list(prefix)) {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
    }
  }

  close(): void {
    this.client.destroy();
  }

  private objectKey(key: string): string {
    const trailing = key.endsWith('/') ? '/' : '';
    return `${this.prefix}${keySegments(key).join('/')}${trailing}`;
  }
}
