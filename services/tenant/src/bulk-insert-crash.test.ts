// A bulk insert's Progress line is an acknowledgment: what it counts must survive the tenant being
// SIGKILLed right after it, mid-insert, with more chunks parsed and gathered but not yet stored.
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { makeTempDir, spawnTs, waitForExit } from '@rookery/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { TRANSACTION_DOCUMENTS } from './routes/bulk-insert.js';

const MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'main.ts');
const DOCUMENTS = 5 * TRANSACTION_DOCUMENTS;

const tmp = makeTempDir('rookery-bulk-crash-');
afterAll(() => tmp.cleanup());

async function start(): Promise<{ child: ChildProcess; base: string }> {
  const child = spawnTs(MAIN, [], { ROOKERY_DATA: tmp.dir, ROOKERY_PORT: '0', ROOKERY_LOG_LEVEL: 'warn' });
  child.stdout?.resume();
  const base = await new Promise<string>((resolve, reject) => {
    child.on('message', (message: { ready?: boolean; address?: string }) => {
      if (message.ready && message.address) resolve(message.address);
    });
    void waitForExit(child).then(({ code, signal }) =>
      reject(new Error(`tenant exited (${code ?? signal})`)),
    );
  });
  return { child, base };
}

const line = (i: number) =>
  `${JSON.stringify({ Id: `crash/${i}`, Document: { N: i, Pad: 'x'.repeat(200), '@metadata': { '@collection': 'Crash' } } })}\n`;

/** Streams the bulk insert and SIGKILLs the tenant as soon as the first Progress line is read; returns its count. */
function bulkInsertUntilFirstProgress(base: string, child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${base}/databases/crash/bulk_insert`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
    });
    request.on('error', () => undefined); // the connection dies with the tenant
    request.on('response', (response) => {
      let text = '';
      response.on('error', () => undefined);
      response.on('data', (data: Buffer) => {
        text += data.toString();
        const first = text.split('\n').find((l) => l.includes('"Progress"'));
        if (!first) return;
        child.kill('SIGKILL');
        resolve((JSON.parse(first) as { Processed: number }).Processed);
      });
      response.on('end', () => reject(new Error(`the bulk insert ended before any Progress line: ${text}`)));
    });
    const lines = Array.from({ length: DOCUMENTS / 1_000 }, (_, c) =>
      Buffer.from(Array.from({ length: 1_000 }, (_, i) => line(c * 1_000 + i)).join('')),
    );
    Readable.from(lines).pipe(request);
  });
}

describe('bulk insert killed mid-insert', () => {
  it('keeps every document a Progress line acknowledged', async () => {
    const first = await start();
    const created = await fetch(`${first.base}/admin/databases`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"Name":"crash"}',
    });
    expect(created.status).toBeLessThan(300);
    const acknowledged = await bulkInsertUntilFirstProgress(first.base, first.child);
    expect(await waitForExit(first.child)).toMatchObject({ signal: 'SIGKILL' });
    expect(acknowledged).toBeGreaterThan(0);

    const second = await start();
    try {
      const stats = (await (await fetch(`${second.base}/databases/crash/stats`)).json()) as {
        Collections: Record<string, number>;
      };
      // Stored in input order, whole transactions at a time: a prefix at least as long as acknowledged.
      expect(stats.Collections.Crash).toBeGreaterThanOrEqual(acknowledged);
      for (const i of [0, acknowledged - 1]) {
        expect((await fetch(`${second.base}/databases/crash/docs?id=crash/${i}`)).status).toBe(200);
      }
    } finally {
      second.child.kill('SIGTERM');
      await waitForExit(second.child);
    }
  });
});
