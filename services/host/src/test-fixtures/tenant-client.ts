// HTTP to a tenant process over its Unix socket (undici), for tests and the cold-start benchmark.
import { Readable } from 'node:stream';
import { Agent, request } from 'undici';

export interface TenantReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: Record<string, unknown>;
}

export class TenantClient {
  private readonly agent: Agent;

  constructor(readonly socketPath: string) {
    this.agent = new Agent({ connect: { socketPath } });
  }

  async call(method: string, path: string, body?: unknown): Promise<TenantReply> {
    const response = await request(`http://tenant${path}`, {
      method: method as 'GET',
      dispatcher: this.agent,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.body.text();
    let json: Record<string, unknown> = {};
    try {
      json = text ? JSON.parse(text) : {};
    } catch {
      // not JSON (NDJSON progress lines)
    }
    return { status: response.statusCode, headers: response.headers, text, json };
  }

  /** Streams NDJSON lines to bulk_insert; resolves with the last progress line. */
  async bulkInsert(db: string, lines: AsyncIterable<string> | Iterable<string>): Promise<TenantReply> {
    const response = await request(`http://tenant/databases/${db}/bulk_insert`, {
      method: 'POST',
      dispatcher: this.agent,
      headers: { 'content-type': 'application/x-ndjson' },
      body: Readable.from(
        (async function* () {
          for await (const line of lines) yield `${line}\n`;
        })(),
      ),
    });
    const text = await response.body.text();
    const last = text.trim().split('\n').at(-1) ?? '';
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(last);
    } catch {
      // reported through status and text
    }
    return { status: response.statusCode, headers: response.headers, text, json };
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
