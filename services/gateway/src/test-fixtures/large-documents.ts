// Large documents for the tests of streams and slow readers: enough bytes that a reader who stops holds
// the tenant mid-answer (more than the socket buffers between them), inserted in one bulk_insert.
import { type Dispatcher, request } from 'undici';
import { expect } from 'vitest';
import type { Client, Connection } from './stack.js';

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

/**
 * A stream held in flight: ~33 MB of documents (more than the socket buffers between the tenant and a
 * reader that stopped) in database `streamed`, streamed through the gateway, of which the reader takes
 * the first chunk and then stops. Destroy `response.body` to make the reader go away.
 */
export async function holdStream(admin: Client, gatewayUrl: string): Promise<Dispatcher.ResponseData> {
  await createLargeDocuments(admin, {
    database: 'streamed',
    collection: 'Rows',
    count: 5_000,
    textBytes: 6_600,
  });
  const response = await request(`${gatewayUrl}/databases/streamed/streams/docs?collection=Rows`, {
    dispatcher: admin.agent,
  });
  expect(response.statusCode).toBe(200);
  const reader = response.body[Symbol.asyncIterator]();
  expect(String((await reader.next()).value)).toContain('"rows/0"');
  return response;
}
