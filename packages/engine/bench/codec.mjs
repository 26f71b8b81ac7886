import zlib from 'node:zlib';

// pnpm bench:codec — compares node:zlib codecs (zstd since Node 24) on generated package documents
// (2,000 per size): compression ratio and µs per document, one JSON line each.
const words =
  'alpha beta gamma delta package grid jquery yui debug ravendb logging json http client server async test mock data'.split(
    ' ',
  );
function doc(size, seed) {
  let s = seed;
  // A tiny LCG so every run compresses the same documents.
  const r = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  const d = {
    Id: 'packages/' + seed,
    Title: '',
    Tags: [],
    Description: '',
    Authors: ['someone'],
    Created: new Date(1e12 + seed * 1e6).toISOString(),
    DownloadCount: Math.floor(r() * 1e6),
    IsPrerelease: r() < 0.2,
    Version: '1.' + Math.floor(r() * 20) + '.' + Math.floor(r() * 9),
  };
  while (JSON.stringify(d).length < size) {
    d.Description += words[Math.floor(r() * words.length)] + ' ';
    if (r() < 0.1) d.Tags.push(words[Math.floor(r() * words.length)]);
  }
  return Buffer.from(JSON.stringify(d));
}
for (const size of [1024, 4096, 16384]) {
  const docs = Array.from({ length: 2000 }, (_, i) => doc(size, i + 1));
  const codecs = {
    'brotli-q1': (b) =>
      zlib.brotliCompressSync(b, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: 1,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length,
        },
      }),
    'brotli-q4': (b) =>
      zlib.brotliCompressSync(b, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: 4,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length,
        },
      }),
    'deflate-1': (b) => zlib.deflateRawSync(b, { level: 1 }),
    'deflate-6': (b) => zlib.deflateRawSync(b, { level: 6 }),
    'zstd-1': (b) =>
      zlib.zstdCompressSync(b, {
        params: { [zlib.constants.ZSTD_c_compressionLevel]: 1 },
        pledgedSrcSize: b.length,
      }),
    'zstd-3': (b) =>
      zlib.zstdCompressSync(b, {
        params: { [zlib.constants.ZSTD_c_compressionLevel]: 3 },
        pledgedSrcSize: b.length,
      }),
  };
  const dec = {
    'brotli-q1': zlib.brotliDecompressSync,
    'brotli-q4': zlib.brotliDecompressSync,
    'deflate-1': zlib.inflateRawSync,
    'deflate-6': zlib.inflateRawSync,
    'zstd-1': zlib.zstdDecompressSync,
    'zstd-3': zlib.zstdDecompressSync,
  };
  for (const [name, f] of Object.entries(codecs)) {
    let t = process.hrtime.bigint();
    let out = 0;
    const comp = [];
    for (const d of docs) {
      const c = f(d);
      out += c.length;
      comp.push(c);
    }
    const ct = Number(process.hrtime.bigint() - t) / 1e3 / docs.length;
    t = process.hrtime.bigint();
    for (const c of comp) dec[name](c);
    const dt = Number(process.hrtime.bigint() - t) / 1e3 / docs.length;
    const inb = docs.reduce((a, d) => a + d.length, 0);
    console.log(
      JSON.stringify({
        size,
        codec: name,
        ratio: +(inb / out).toFixed(2),
        compress_us: +ct.toFixed(1),
        decompress_us: +dt.toFixed(1),
      }),
    );
  }
}
