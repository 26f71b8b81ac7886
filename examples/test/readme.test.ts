// The README's first hour, as a new user lives it: `npm start` on a fresh data directory, then every
// command and program the README shows, as written, in order, from a second "terminal" (a temp working
// directory); then `kill -INT` of the `npm start` process, after which nothing of it still listens.
//
// What differs from the user's run is only where things are: the README's `https://localhost:8443`,
// `.rookery/data` and `./rookery` become this run's URL (ports are ephemeral: ROOKERY_*_PORT=0), its temp
// data directory and the repository's `rookery` file, and the placeholder TOTP code `123456` becomes the
// code an authenticator would show. Everything else is the README's text.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { makeTempDir } from '@rookery/testkit';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..', '..');
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');

/** The fenced block right after `<!-- marker -->` in the README, without its fences. */
function readmeBlock(marker: string): string {
  const start = readme.indexOf(`<!-- ${marker} -->\n`);
  if (start < 0) throw new Error(`README.md has no <!-- ${marker} --> block`);
  const open = readme.indexOf('\n', readme.indexOf('```', start)) + 1;
  return readme.slice(open, readme.indexOf('\n```', open - 1) + 1);
}

const temp = makeTempDir('rookery-readme-');
const dataDir = path.join(temp.dir, 'data');
/** The user's second terminal: what the commands write (.rookery/acme, .rookery/ada) lands here, not in the repository. */
const workDir = path.join(temp.dir, 'work');
let npmStart: ChildProcess;
let output = '';
let url = '';

/** A README shell block with only the locations of this run swapped in, run by bash in `workDir`. */
async function runShell(marker: string, swaps: Array<[string, string]> = []) {
  let script = readmeBlock(`readme-test: ${marker}`)
    .replaceAll('https://localhost:8443', url)
    .replaceAll('.rookery/data', dataDir)
    .replaceAll('./rookery ', `${path.join(root, 'rookery')} `);
  for (const [from, to] of swaps) script = script.replaceAll(from, to);
  // curl ends a body without a newline (a terminal shows the next prompt after it): end each answer's
  // line here, so the test can read the answers one per line.
  const prelude = 'curl() { command curl "$@"; echo; }\n';
  return run('bash', ['-euo', 'pipefail', '-c', prelude + script], {
    cwd: workDir,
    env: { ...process.env, ROOKERY_DATA: dataDir },
    maxBuffer: 16 * 1024 * 1024,
  });
}

/** The address a service logged as it came up (`host listening` / `worker ready` / `gateway ready`). */
function loggedAddress(message: string): URL {
  const line = output.split('\n').find((l) => l.includes(`"msg":"${message}"`));
  const parsed = JSON.parse(line ?? '{}') as { address?: string; url?: string };
  return new URL(parsed.address ?? parsed.url ?? 'missing:');
}

function refusesConnections(address: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(address.port), address.hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

beforeAll(async () => {
  fs.mkdirSync(workDir);
  npmStart = spawn('npm', ['start'], {
    cwd: root,
    env: {
      ...process.env,
      ROOKERY_DATA: dataDir,
      ROOKERY_GATEWAY_PORT: '0',
      ROOKERY_HOST_PORT: '0',
      ROOKERY_WORKER_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const running = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      const match = /Rookery is running at (https:\/\/localhost:\d+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    npmStart.stdout!.on('data', onData);
    npmStart.stderr!.on('data', onData);
    npmStart.once('exit', (code) =>
      reject(new Error(`npm start exited (${code}) before it ran:\n${output}`)),
    );
  });
  url = await running;
  // The demo database exists once the lines to try are printed.
  await new Promise<void>((resolve) => {
    const check = () => (output.includes('Stop with Ctrl+C') ? resolve() : setTimeout(check, 50));
    check();
  });
}, 900_000); // a first `npm start` installs and builds; in CI the build just ran and is cached

afterAll(async () => {
  if (npmStart && npmStart.exitCode === null && npmStart.signalCode === null) {
    npmStart.kill('SIGINT');
    await exited(npmStart);
  }
  temp.cleanup();
});

describe('the README, followed in order against a real npm start', () => {
  it('shows examples/first-session.ts exactly as the file is', () => {
    expect(readmeBlock('examples/first-session.ts')).toBe(
      fs.readFileSync(path.join(root, 'examples', 'first-session.ts'), 'utf8'),
    );
  });

  it('runs the first curl lines: store Ada, load her by any case, query her, read usage', async () => {
    const { stdout } = await runShell('first-requests');
    const [stored, loaded, queried, usage] = stdout.split('\n').filter((line) => line.startsWith('{'));
    expect(JSON.parse(stored!)).toMatchObject({ Id: 'users/1-A' });
    expect(JSON.parse(loaded!)).toMatchObject({ Results: [{ Name: 'Ada Lovelace' }] });
    expect(JSON.parse(queried!)).toMatchObject({ TotalResults: 1, Results: [{ Name: 'Ada Lovelace' }] });
    expect(JSON.parse(usage!)).not.toHaveProperty('code');
  });

  it('runs examples/first-session.ts as the README says, beside Ada rather than over her', async () => {
    const { stdout } = await run('npx', ['tsx', 'examples/first-session.ts'], {
      cwd: root,
      env: { ...process.env, ROOKERY_DATA: dataDir, ROOKERY_URL: url },
    });
    expect(stdout).toBe('Stored and loaded users/grace-hopper: Grace Hopper\n');
    const { stdout: both } = await runShell('first-requests');
    expect(both).toContain('"TotalResults":1');
    expect(both).toContain('"Name":"Ada Lovelace"');
  });

  it("runs the CLI's tenant lines: a tenant, its admin's certificate files, its usage", async () => {
    const { stdout } = await runShell('tenant');
    const acme = path.join(workDir, '.rookery', 'acme');
    expect(fs.readdirSync(acme).sort()).toEqual(['ca.crt', 'ops.crt', 'ops.key']);
    expect(fs.statSync(path.join(acme, 'ops.key')).mode & 0o777).toBe(0o600);
    expect(stdout).toContain('acme');
  });

  it("runs the person's lines, then opens her two-factor session with her authenticator's code", async () => {
    const { stdout } = await runShell('person');
    expect(fs.readdirSync(path.join(workDir, '.rookery', 'ada')).sort()).toEqual([
      'ada-lovelace.crt',
      'ada-lovelace.key',
      'ada-lovelace.p12',
      'ca.crt',
      'p12-password.txt',
    ]);
    const secret = /otpauth:\/\/totp\/\S*[?&]secret=([A-Z2-7]+)/.exec(stdout)?.[1];
    expect(secret).toBeDefined();
    const code = await generate({ secret: secret! });
    const { stdout: session } = await runShell('two-factor', [['"123456"', `"${code}"`]]);
    expect(JSON.parse(session)).toEqual({ Binding: 'certificate', ExpiresAt: expect.any(String) });
  });

  it('stops every service on kill -INT of the npm start process', async () => {
    const services = [loggedAddress('host listening'), loggedAddress('worker ready'), new URL(url)];
    for (const address of services) expect(await refusesConnections(address)).toBe(false);
    npmStart.kill('SIGINT');
    await exited(npmStart);
    for (const address of services) expect(await refusesConnections(address)).toBe(true);
  });
});

describe('npm start before it installs anything', () => {
  it('names a port already in use and the variable that moves it, without a stack', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as net.AddressInfo;
    try {
      const failed = await run('npm', ['start'], {
        cwd: root,
        env: { ...process.env, ROOKERY_DATA: dataDir, ROOKERY_GATEWAY_PORT: String(port) },
      }).then(
        () => null,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stderr).toContain(
        `✖ Port ${port} on 127.0.0.1, where the gateway listens, is already in use`,
      );
      expect(failed?.stderr).toContain('ROOKERY_GATEWAY_PORT=<port> npm start (0 picks a free one)');
      expect(failed?.stderr).not.toMatch(/\n\s+at /);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('builds once whatever the ROOKERY_* settings: they are not part of the build cache key', async () => {
    const hash = async (value: string) => {
      const { stdout } = await run(
        'npx',
        ['turbo', 'run', 'build', '--dry=json', '--filter=@rookery/protocol'],
        { cwd: root, env: { ...process.env, ROOKERY_GATEWAY_PORT: value }, maxBuffer: 16 * 1024 * 1024 },
      );
      return (JSON.parse(stdout) as { tasks: Array<{ hash: string }> }).tasks.map((t) => t.hash);
    };
    expect(await hash('8443')).toEqual(await hash('9443'));
  });
});
