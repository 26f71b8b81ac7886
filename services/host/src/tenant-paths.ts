// Where a tenant lives on this host: `<data>/tenants/<id>/` and the Unix socket its process listens on.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TENANT_ID_PATTERN } from '@rookery/protocol';

/** The longest Unix socket path (sun_path is 108 bytes with the terminating NUL). */
const MAX_SOCKET_PATH = 107;

export class TenantPaths {
  /** `<data>/tenants`, created if missing. */
  readonly root: string;

  constructor(dataDir: string) {
    this.root = path.join(dataDir, 'tenants');
    fs.mkdirSync(this.root, { recursive: true });
  }

  dirOf(id: string): string {
    return path.join(this.root, id);
  }

  /**
   * `<data>/tenants/<id>/tenant.sock`, or, when that is longer than a Unix
   * socket path may be (deep data directories), `<tmp>/rookery-<uid>-<hash of the data dir>/<id>.sock`.
   */
  socketPathOf(id: string): string {
    const preferred = path.join(this.dirOf(id), 'tenant.sock');
    if (Buffer.byteLength(preferred) <= MAX_SOCKET_PATH) return preferred;
    const hash = createHash('sha256').update(this.root).digest('hex').slice(0, 12);
    const dir = path.join(os.tmpdir(), `rookery-${process.getuid?.() ?? 'user'}-${hash}`);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return path.join(dir, `${id}.sock`);
  }

  /** Ids of the tenants with a directory here (anything else in `<data>/tenants` is not a tenant). */
  storedIds(): string[] {
    return fs
      .readdirSync(this.root, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && TENANT_ID_PATTERN.test(entry.name))
      .map((entry) => entry.name);
  }
}
