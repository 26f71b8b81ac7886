// The single-document write load both bench:vs-postgres-writes and bench:put-cpu send: generated NuGet-like
// package versions PUT from 64 connections, each waiting for its answer before its next.
import { generatePackages, type PackageDocument } from '@rookery/datagen';
import type { Pool } from 'undici';

export const CONNECTIONS = 64;

export interface Doc {
  id: string;
  /** The document's JSON as the servers receive it: the generated package version without its `id`. */
  json: string;
}

/** COUNT documents from the generator, their ids prefixed (so that warm-ups never collide with the measured ones). */
export function putDocuments(count: number, seed: number, prefix: string): Doc[] {
  const out: Doc[] = [];
  for (const generated of generatePackages({ seed, packageVersions: count })) {
    const { id, ...body } = generated as PackageDocument;
    out.push({ id: `${prefix}${id}`, json: JSON.stringify(body) });
  }
  return out;
}

/** Runs `write` for every document from CONNECTIONS concurrent loops; returns documents per second. */
export async function concurrently(
  docs: Doc[],
  write: (loop: number, doc: Doc) => Promise<void>,
): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, loop) => {
      for (let i = next++; i < docs.length; i = next++) await write(loop, docs[i]!);
    }),
  );
  return docs.length / ((performance.now() - started) / 1000);
}

/** `PUT /databases/bench/docs?id=…` for every document; returns PUTs per second. */
export async function rookeryPuts(pool: Pool, docs: Doc[]): Promise<number> {
  const headers = { 'content-type': 'application/json' };
  return concurrently(docs, async (_loop, doc) => {
    const { statusCode, body } = await pool.request({
      method: 'PUT',
      path: `/databases/bench/docs?id=${encodeURIComponent(doc.id)}`,
      headers,
      body: doc.json,
    });
    const text = await body.text();
    if (statusCode !== 201) throw new Error(`PUT ${doc.id}: ${statusCode} ${text}`);
  });
}
