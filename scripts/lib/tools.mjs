// Shared by `npm test` and the load tests (loadtests/): where the Go toolchain
// is, which the load tests build k6 with.
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/** `go` on PATH, else in /usr/local/go/bin (where Go's own installer puts it), or null. */
export function findGo() {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/local/go/bin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = path.join(dir, 'go');
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return null;
}
