// Small helpers for streams of buffers (files read, sealed and written in pieces).

/** Re-cuts a stream into pieces of exactly `size` bytes (the last one shorter). */
export async function* rechunk(source: AsyncIterable<Buffer>, size: number): AsyncGenerator<Buffer> {
  let parts: Buffer[] = [];
  let bytes = 0;
  for await (const piece of source) {
    let rest = piece;
    while (bytes + rest.length >= size) {
      const take = size - bytes;
      parts.push(rest.subarray(0, take));
      yield parts.length === 1 ? parts[0]! : Buffer.concat(parts);
      rest = rest.subarray(take);
      parts = [];
      bytes = 0;
    }
    if (rest.length > 0) {
      parts.push(rest);
      bytes += rest.length;
    }
  }
  if (bytes > 0) yield Buffer.concat(parts);
}
