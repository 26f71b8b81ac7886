// A test double of the S3 REST API — the one part of a backup's path that cannot run here (no
// cloud, no MinIO binary in the registries this project uses). It speaks, path-style, exactly the
// calls S3Storage makes through the real AWS SDK: PutObject, GetObject, DeleteObject,
// ListObjectsV2 (two keys per page, so pagination is exercised), and multipart uploads (create,
// upload part, complete, abort; an object appears only on completion). Requests without a SigV4
// Authorization header for the expected access key are refused, as S3 would.
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeS3 {
  url: string;
  bucket: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  objects: Map<string, Buffer>;
  /** Multipart uploads begun and neither completed nor aborted. */
  pendingUploads(): number;
  close(): Promise<void>;
}

const PAGE_SIZE = 2;

export async function startFakeS3(bucket = 'backups'): Promise<FakeS3> {
  const credentials = { accessKeyId: 'AKIDTESTROOKERY', secretAccessKey: 'test-secret' };
  const objects = new Map<string, Buffer>();
  const uploads = new Map<string, { key: string; parts: Map<number, Buffer> }>();

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = new URL(request.url ?? '/', 'http://fake');
      const [, requestBucket = '', ...rest] = url.pathname.split('/');
      const key = decodeURIComponent(rest.join('/'));
      const send = (status: number, xml = '', headers: Record<string, string> = {}) =>
        response.writeHead(status, { 'content-type': 'application/xml', ...headers }).end(xml);
      const error = (status: number, code: string) =>
        send(
          status,
          `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`,
        );

      if (
        !String(request.headers.authorization).startsWith(
          `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/`,
        )
      ) {
        return error(403, 'AccessDenied');
      }
      if (requestBucket !== bucket) return error(404, 'NoSuchBucket');
      const query = url.searchParams;
      const etag = (bytes: Buffer) => `"${createHash('md5').update(bytes).digest('hex')}"`;

      if (request.method === 'GET' && key === '' && query.get('list-type') === '2') {
        const prefix = query.get('prefix') ?? '';
        const after = query.get('continuation-token') ?? '';
        const matching = [...objects.keys()].filter((k) => k.startsWith(prefix) && k > after).sort();
        const page = matching.slice(0, PAGE_SIZE);
        const truncated = matching.length > PAGE_SIZE;
        const contents = page
          .map((k) => `<Contents><Key>${k}</Key><Size>${objects.get(k)!.length}</Size></Contents>`)
          .join('');
        return send(
          200,
          `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>${bucket}</Name><Prefix>${prefix}</Prefix>` +
            `<KeyCount>${page.length}</KeyCount><MaxKeys>${PAGE_SIZE}</MaxKeys><IsTruncated>${truncated}</IsTruncated>` +
            `${contents}${truncated ? `<NextContinuationToken>${page.at(-1)}</NextContinuationToken>` : ''}</ListBucketResult>`,
        );
      }
      if (request.method === 'POST' && query.has('uploads')) {
        const id = randomUUID();
        uploads.set(id, { key, parts: new Map() });
        return send(
          200,
          `<?xml version="1.0" encoding="UTF-8"?><InitiateMultipartUploadResult><Bucket>${bucket}</Bucket><Key>${key}</Key><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`,
        );
      }
      const upload = uploads.get(query.get('uploadId') ?? '');
      if (query.has('uploadId') && (!upload || upload.key !== key)) return error(404, 'NoSuchUpload');
      if (request.method === 'PUT' && upload) {
        upload.parts.set(Number(query.get('partNumber')), body);
        return send(200, '', { etag: etag(body) });
      }
      if (request.method === 'POST' && upload) {
        const numbers = [...body.toString('utf8').matchAll(/<PartNumber>(\d+)<\/PartNumber>/g)].map((m) =>
          Number(m[1]),
        );
        if (numbers.some((n) => !upload.parts.has(n))) return error(400, 'InvalidPart');
        const whole = Buffer.concat(numbers.map((n) => upload.parts.get(n)!));
        objects.set(key, whole);
        uploads.delete(query.get('uploadId')!);
        return send(
          200,
          `<?xml version="1.0" encoding="UTF-8"?><CompleteMultipartUploadResult><Bucket>${bucket}</Bucket><Key>${key}</Key><ETag>${etag(whole)}</ETag></CompleteMultipartUploadResult>`,
        );
      }
      if (request.method === 'DELETE' && upload) {
        uploads.delete(query.get('uploadId')!);
        return send(204);
      }
      if (request.method === 'PUT') {
        objects.set(key, body);
        return send(200, '', { etag: etag(body) });
      }
      if (request.method === 'GET') {
        const object = objects.get(key);
        if (!object) return error(404, 'NoSuchKey');
        return response
          .writeHead(200, {
            'content-type': 'application/octet-stream',
            'content-length': object.length,
            etag: etag(object),
          })
          .end(object);
      }
      if (request.method === 'DELETE') {
        objects.delete(key);
        return send(204);
      }
      return error(405, 'MethodNotAllowed');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bucket,
    credentials,
    objects,
    pendingUploads: () => uploads.size,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
