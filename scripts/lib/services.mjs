// Shared by `npm start` and the load tests (loadtests/): start one of Rookery's
// built service mains as a child process and wait for it to say it is ready,
// and the shared secret the host and the gateway authenticate each other with.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** The secret in `file`, made (24 random bytes, base64url, mode 0600) if the file does not exist yet. */
export function readOrCreateSecret(file) {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const secret = randomBytes(24).toString('base64url');
    fs.writeFileSync(file, secret, { mode: 0o600 });
    return secret;
  }
}

/**
 * Spawns a service's built main (`node --no-node-snapshot --max-semi-space-size=16 <entry>`: the
 * young generation of Node 20, as the host gives its tenants, see services/host/src/tenant-command.ts) with an IPC
 * channel. `ready` resolves with the first IPC message the service sends (the
 * host and the gateway send `{ready, address}` / `{url}` once listening) and
 * rejects if the process exits before that, so a start-up failure is an error
 * rather than a hang. `stdio` is where the service's output goes: 'inherit'
 * (the terminal), or a file descriptor (the load tests keep it off their own stdout). `nodeArgs` go
 * before the entry (a test runs a TypeScript main through tsx with them).
 */
export function spawnService(name, entry, { env, stdio = 'inherit', nodeArgs = [] }) {
  const child = spawn(
    process.execPath,
    ['--no-node-snapshot', '--max-semi-space-size=16', ...nodeArgs, entry],
    {
      env,
      stdio: ['ignore', stdio, stdio, 'ipc'],
    },
  );
  const ready = new Promise((resolve, reject) => {
    const onExit = (code, signal) =>
      reject(new Error(`the ${name} exited during start-up (${code ?? signal})`));
    child.once('exit', onExit);
    child.once('message', (message) => {
      child.off('exit', onExit);
      resolve(message);
    });
  });
  return { child, ready };
}
