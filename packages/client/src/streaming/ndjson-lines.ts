// Splits a byte stream into NDJSON lines as chunks arrive. Lines are cut on the newline byte before
// decoding, so a multi-byte UTF-8 character split across two chunks is decoded whole; only the
// unfinished tail of the last chunk is held back, never the whole response.

const NEWLINE = 0x0a;

/** Lines of text (without their `\n`, `\r\n` too), pulled from the source only as the consumer pulls. */
export async function* ndjsonLines(source: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  // The start of an unfinished line, in pieces: joined once its newline arrives, so a long line that
  // spans many chunks is copied once rather than once per chunk.
  let pending: Buffer[] = [];
  for await (const chunk of source) {
    const data =
      typeof chunk === 'string'
        ? Buffer.from(chunk, 'utf8')
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    for (let end = data.indexOf(NEWLINE); end !== -1; end = data.indexOf(NEWLINE, start)) {
      let line: string;
      if (pending.length > 0) {
        const joined = Buffer.concat([...pending, data.subarray(start, end)]);
        pending = [];
        line = lineText(joined, 0, joined.length);
      } else line = lineText(data, start, end);
      start = end + 1;
      if (line !== '') yield line;
    }
    // Copied out of the chunk: holding a slice would keep the whole chunk's memory alive.
    if (start < data.length) pending.push(Buffer.from(data.subarray(start)));
  }
  if (pending.length > 0) {
    const rest = Buffer.concat(pending);
    const line = lineText(rest, 0, rest.length);
    if (line !== '') yield line;
  }
}

function lineText(data: Buffer, start: number, end: number): string {
  const stop = end > start && data[end - 1] === 0x0d ? end - 1 : end;
  return data.toString('utf8', start, stop);
}
