import { afterEach, describe, expect, it } from 'vitest';
import { CHUNK_DOCUMENTS } from './line-parser.js';
import { type BulkParseSession, BulkParseThread, type ParseEvent } from './parse-thread.js';

const line = (i: number, extra = '') =>
  JSON.stringify({
    Id: `items/${i}`,
    Document: { N: i, Pad: extra, '@metadata': { '@collection': 'Items' } },
  });

/** Every event of a session until it ends or fails. */
async function drain(session: BulkParseSession): Promise<ParseEvent[]> {
  const events: ParseEvent[] = [];
  for (;;) {
    const event = await session.next();
    events.push(event);
    if (event.type !== 'chunk') return events;
  }
}

const ids = (events: ParseEvent[]) => events.flatMap((e) => (e.type === 'ended' ? [] : e.chunk.ids));

describe('bulk insert parse thread', () => {
  let thread: BulkParseThread;
  afterEach(() => thread.close());

  it('hands back prepared chunks in order, lines split across pushes, for sessions running side by side', async () => {
    thread = new BulkParseThread();
    const text = Buffer.from(`${Array.from({ length: 12_000 }, (_, i) => line(i)).join('\n')}\n`);
    const a = thread.open(64 * 1024);
    const b = thread.open(64 * 1024);
    for (let at = 0; at < text.length; at += 7_777) {
      a.push(text.subarray(at, at + 7_777));
      b.push(text.subarray(at, at + 3_333));
      b.push(text.subarray(at + 3_333, at + 7_777));
    }
    a.end();
    b.end();
    const [eventsA, eventsB] = await Promise.all([drain(a), drain(b)]);
    for (const events of [eventsA, eventsB]) {
      expect(events.map((e) => (e.type === 'chunk' ? e.chunk.ids.length : e.type))).toEqual([
        ...Array.from({ length: 12_000 / CHUNK_DOCUMENTS }, () => CHUNK_DOCUMENTS),
        'ended',
      ]);
      expect(ids(events)).toEqual(Array.from({ length: 12_000 }, (_, i) => `items/${i}`));
    }
    const [first] = eventsA;
    if (first?.type !== 'chunk') throw new Error('expected a chunk first');
    expect(first.chunk.collections[0]).toBe('Items');
    expect(JSON.parse(first.chunk.bodies[7] ?? '')).toEqual({ N: 7, Pad: '' });
    expect(a.backlog).toBe(0);
  });

  it('reports a bad line by number, with the lines before it that no chunk carried', async () => {
    thread = new BulkParseThread();
    const session = thread.open(64 * 1024);
    session.push(
      Buffer.from(`${line(1)}\n${line(2)}\n{"Id": "x/1", "Document": {"@metadata": []}}\n${line(3)}\n`),
    );
    session.end();
    const events = await drain(session);
    const failed = events.at(-1);
    expect(failed).toMatchObject({
      type: 'failed',
      error: { code: 'InvalidMetadata', details: { line: 3 } },
    });
    expect(ids(events)).toEqual(['items/1', 'items/2']);
    expect(failed?.type === 'failed' && failed.error.message).toMatch(/^Line 3: /);
  });

  it('refuses a line over the document limit without holding it whole', async () => {
    thread = new BulkParseThread();
    const session = thread.open(1024);
    session.push(Buffer.from(`${line(1)}\n${line(2, 'x'.repeat(600))}`));
    session.push(Buffer.from('y'.repeat(600)));
    const events = await drain(session);
    expect(events.at(-1)).toMatchObject({ type: 'failed', error: { code: 'PayloadTooLarge' } });
    expect(ids(events)).toEqual(['items/1']);
  });

  it('fails the sessions of a thread that dies, and starts a new thread for the next bulk insert', async () => {
    thread = new BulkParseThread();
    const session = thread.open(64 * 1024);
    session.push(Buffer.from(`${line(1)}\n`));
    await thread['thread'].running().terminate();
    expect(await drain(session)).toEqual([
      expect.objectContaining({ type: 'failed', error: expect.objectContaining({ code: 'InternalError' }) }),
    ]);
    const next = thread.open(64 * 1024);
    next.push(Buffer.from(line(5)));
    next.end();
    expect(ids(await drain(next))).toEqual(['items/5']);
  });
});
