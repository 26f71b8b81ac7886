// The runner's own client for set-up through the gateway (databases, bulk
// insert, indexes, checks), over the same mutual TLS as the k6 virtual users.
import fs from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { Pool } from 'undici';
import { z } from 'zod';

export interface TlsFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
}

export interface Answer {
  status: number;
  body: unknown;
  text: string;
}

const MAX_ATTEMPTS = 30;

const BulkLineSchema = z.object({
  Type: z.enum(['Progress', 'Completed', 'Failed']),
  Processed: z.number().int(),
  Error: z.unknown().optional(),
});

export class GatewayClient {
  private readonly pool: Pool;

  constructor(url: string, tls: TlsFiles) {
    this.pool = new Pool(url, {
      connections: 8,
      // A bulk insert of millions of documents streams for minutes.
      bodyTimeout: 0,
      headersTimeout: 0,
      connect: {
        ca: fs.readFileSync(tls.caFile),
        cert: fs.readFileSync(tls.certFile),
        key: fs.readFileSync(tls.keyFile),
        servername: 'localhost',
      },
    });
  }

  /**
   * One request with a JSON body. A 503 with Retry-After (a tenant still waking up) is retried after
   * that many seconds, as a client should: set-up must not fail because a tenant started slowly.
   */
  async call(method: 'GET' | 'PUT' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<Answer> {
    for (let attempt = 1; ; attempt++) {
      const answer = await this.once(method, path, body);
      const retryAfter = Number(answer.retryAfter);
      if (answer.status !== 503 || !(retryAfter > 0) || attempt === MAX_ATTEMPTS) return answer;
      await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
    }
  }

  private async once(method: string, path: string, body: unknown): Promise<Answer & { retryAfter: unknown }> {
    const response = await this.pool.request({
      method,
      path,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? null : JSON.stringify(body),
    });
    const text = await response.body.text();
    let parsed: unknown = null;
    try {
      parsed = text.length > 0 ? JSON.parse(text) : null;
    } catch {
      // not JSON: the text says what happened
    }
    return { status: response.statusCode, body: parsed, text, retryAfter: response.headers['retry-after'] };
  }

  /** Like `call`, but anything outside `expected` statuses is an error naming the request. */
  async expect(
    method: 'GET' | 'PUT' | 'POST' | 'DELETE',
    path: string,
    body: unknown,
    expected: readonly number[],
  ): Promise<Answer> {
    const answer = await this.call(method, path, body);
    if (!expected.includes(answer.status)) {
      throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text.slice(0, 500)}`);
    }
    return answer;
  }

  /**
   * Streams NDJSON lines (`{"Id", "Document"}`) to `bulk_insert` and reports the
   * server's progress lines (documents committed so far). Resolves with the
   * number committed; a `Failed` line or an error status rejects.
   */
  async bulkInsert(
    database: string,
    ndjson: Readable,
    onProgress: (processed: number) => void,
  ): Promise<number> {
    const response = await this.pool.request({
      method: 'POST',
      path: `/databases/${encodeURIComponent(database)}/bulk_insert`,
      headers: { 'content-type': 'application/x-ndjson' },
      body: ndjson,
    });
    if (response.statusCode !== 200) {
      throw new Error(
        `bulk_insert answered ${response.statusCode}: ${(await response.body.text()).slice(0, 500)}`,
      );
    }
    let processed = 0;
    for await (const line of createInterface({ input: response.body, crlfDelay: Number.POSITIVE_INFINITY })) {
      if (line.trim().length === 0) continue;
      const progress = BulkLineSchema.parse(JSON.parse(line));
      processed = progress.Processed;
      if (progress.Type === 'Failed') {
        throw new Error(`bulk_insert failed after ${processed} documents: ${JSON.stringify(progress.Error)}`);
      }
      onProgress(processed);
    }
    return processed;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
