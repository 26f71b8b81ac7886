import { describe, expect, it } from 'vitest';
import { ndjsonLines } from './ndjson-lines.js';

async function collect(chunks: (string | Uint8Array)[]): Promise<string[]> {
  async function* source() {
    yield* chunks;
  }
  const lines: string[] = [];
  for await (const line of ndjsonLines(source())) lines.push(line);
  return lines;
}

/** Every way of cutting `bytes` into two or three chunks. */
function splits(bytes: Buffer): Buffer[][] {
  const out: Buffer[][] = [];
  for (let i = 0; i <= bytes.length; i++) {
    for (let j = i; j <= bytes.length; j++)
      out.push([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]);
  }
  return out;
}

describe('ndjsonLines', () => {
  it('gives the same lines however the bytes are cut, across multi-byte characters and CRLF', async () => {
    const text = '{"a":"é🙂"}\r\n{"b":"ñ"}\n\n{"c":1}';
    const expected = ['{"a":"é🙂"}', '{"b":"ñ"}', '{"c":1}'];
    for (const chunks of splits(Buffer.from(text, 'utf8'))) {
      expect(await collect(chunks)).toEqual(expected);
    }
  });

  it('joins a line spread over many chunks and ends on a final line without a newline', async () => {
    const long = JSON.stringify({ text: 'x'.repeat(10_000) });
    const chunks = long.match(/.{1,7}/gs)!.map((s) => Buffer.from(s));
    expect(await collect([...chunks, '\n', '{"@end":{"Count":1}}'])).toEqual([long, '{"@end":{"Count":1}}']);
  });

  it('reads the source only as lines are pulled', async () => {
    let pulled = 0;
    async function* source() {
      for (let i = 0; i < 100; i++) {
        pulled++;
        yield `{"i":${i}}\n`;
      }
    }
    const lines = ndjsonLines(source());
    await lines.next();
    await lines.next();
    expect(pulled).toBe(2);
    await lines.return(undefined);
  });
});
