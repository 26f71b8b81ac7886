// The web console (services/console) as the gateway serves it at `/`: its production build, read once at
// start into memory (a few hundred KB). A request names a file of that build exactly or gets nothing, so no
// path reaches the disk. index.html is revalidated at every load (a new build is picked up at the next
// start); the assets' names carry their content hash, so they are cached for a year. Served after the client
// certificate is checked (the TLS handshake needs one anyway) but before the two-factor session: the console
// is the page that opens it. The policy allows the console's own files and calls to this origin only.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';

export const CONSOLE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

interface ConsoleFile {
  body: Buffer;
  type: string;
  cacheControl: string;
  etag: string;
}

export class ConsoleFiles {
  private constructor(private readonly files: ReadonlyMap<string, ConsoleFile>) {}

  /** The build in `dir` (index.html and assets/); null when there is none (`/` then answers 404). */
  static load(dir: string | null): ConsoleFiles | null {
    if (dir === null || !fs.existsSync(path.join(dir, 'index.html'))) return null;
    const files = new Map<string, ConsoleFile>();
    files.set('/', file(fs.readFileSync(path.join(dir, 'index.html')), '.html', 'no-cache'));
    const assets = path.join(dir, 'assets');
    if (fs.existsSync(assets)) {
      for (const entry of fs.readdirSync(assets, { withFileTypes: true })) {
        const type = path.extname(entry.name);
        if (!entry.isFile() || TYPES[type] === undefined) continue;
        const body = fs.readFileSync(path.join(assets, entry.name));
        files.set(`/assets/${entry.name}`, file(body, type, 'public, max-age=31536000, immutable'));
      }
    }
    return new ConsoleFiles(files);
  }

  /** Answers a GET or HEAD of a file of the build; false (nothing written) for anything else. */
  serve(request: http.IncomingMessage, response: http.ServerResponse, urlPath: string): boolean {
    const method = request.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') return false;
    const found = this.files.get(urlPath);
    if (!found) return false;
    const headers = {
      'content-type': found.type,
      'cache-control': found.cacheControl,
      etag: found.etag,
      'content-security-policy': CONSOLE_POLICY,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
    };
    if (request.headers['if-none-match'] === found.etag) {
      response.writeHead(304, headers);
      response.end();
      return true;
    }
    response.writeHead(200, { ...headers, 'content-length': found.body.length });
    response.end(method === 'HEAD' ? undefined : found.body);
    return true;
  }
}

function file(body: Buffer, extension: string, cacheControl: string): ConsoleFile {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { body, type: TYPES[extension]!, cacheControl, etag };
}
