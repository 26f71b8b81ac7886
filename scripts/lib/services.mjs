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

/** The Node flags every Rookery service runs with: the young generation of Node 20, as the host gives its
 * tenants (services/host/src/tenant-command.ts), and no startup snapshot (isolated-vm, the index sandbox,
 * asks for it on Node 20+). infra/terraform's systemd units render the same flags. */
export const SERVICE_NODE_FLAGS = ['--no-node-snapshot', '--max-semi-space-size=16'];

/**
 * Spawns a service's built main (`node <SERVICE_NODE_FLAGS> <entry>`) with an IPC channel. `ready`
 * resolves with the first IPC message the service sends (the host and the gateway send `{ready, address}` /
 * `{url}` once listening) and rejects if the process exits before that, so a start-up failure is an error
 * rather than a hang. `stdio` is where the service's output goes: 'inherit' (the terminal), or a file
 * descriptor (the load tests keep it off their own stdout). `nodeArgs` go before the entry (a test runs a
 * TypeScript main through tsx with them).
 */
export function spawnService(name, entry, { env, stdio = 'inherit', nodeArgs = [] }) {
  return spawnReady(name, process.execPath, [...SERVICE_NODE_FLAGS, ...nodeArgs, entry], { env, stdio });
}

/**
 * `spawnService` for a command line given whole (a rendered systemd unit's ExecStart, run in its
 * WorkingDirectory): the same IPC readiness, the same failure when it exits first.
 */
export function spawnReady(name, command, args, { env, stdio = 'inherit', cwd }) {
  const child = spawn(command, args, { env, cwd, stdio: ['ignore', stdio, stdio, 'ipc'] });
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
