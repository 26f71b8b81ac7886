// Large documents for the tests of streams and slow readers: enough bytes that a reader who stops holds
// the tenant mid-answer (more than the socket buffers between them), inserted in one bulk_insert.
import { expect } from 'vitest';
import type { Connection } from './stack.js';

/**
 * Creates `database` and fills it with `count` documents of `collection`, each with ~`textBytes` of text
 * (`N` is the document's number, ids are `<prefix>/<N>` with the collection's name in lower case).
 */
export async function createLargeDocuments(
  admin: Connection,
  options: { database: string; collection: string; count: number; textBytes: number },
): Promise<void> {
  const { database, collection, count, textBytes } = options;
  const filler = 'y'.repeat(textBytes);
  const prefix = collection.toLowerCase();
  const lines = Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      Id: `${prefix}/${i}`,
      Document: { N: i, Text: `${i}${filler}`, '@metadata': { '@collection': collection } },
    }),
  );
  expect((await admin.call('PUT', '/admin/databases', { Name: database })).status).toBe(201);
  const inserted = await admin.call('POST', `/databases/${database}/bulk_insert`, `${lines.join('\n')}\n`, {
    'content-type': 'application/x-ndjson',
  });
  expect(inserted.text).toContain('"Completed"');
}
