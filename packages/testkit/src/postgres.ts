// A real, throwaway PostgreSQL server for tests: initdb into a temporary
// directory, a postmaster on a free 127.0.0.1 port (and a Unix socket in that
// directory), fsync off (unless asked to be durable, as benchmarks against it
// must be), everything removed by stop(). PostgreSQL refuses to
// run as root, so as root the server runs as the `postgres` system user that
// Debian's package creates.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface PostgresServer {
  /** postgresql://postgres@127.0.0.1:<port>/postgres (trust authentication). */
  connectionString: string;
  port: number;
  /** The directory holding the Unix socket (`.s.PGSQL.<port>`). */
  socketDir: string;
  /** Connection string for another database on the same server. */
  connectionStringFor(database: string): string;
  /**
   * A new, empty database nobody has used (named `<prefix>_<pid>_<n>`) and how to drop it: suites
   * that must start each test from an empty schema take one per test.
   */
  freshDatabase(prefix: string): Promise<{ url: string; drop(): Promise<void> }>;
  /**
   * Takes the server down as an outage would (fast shutdown: every client connection is cut) and
   * resolves once it exited; its data directory and port are kept for `start()`.
   */
  shutDown(): Promise<void>;
  /** Starts the server again after `shutDown()`, on the same data and port; resolves once it accepts connections. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

const INSTALL_HINT =
  'PostgreSQL is not installed: the PostgreSQL tests start a real server. On Debian or Ubuntu run ' +
  '`apt-get install -y --no-install-recommends postgresql` (as root; `npm test` does this itself when ' +
  'run as root), or point ROOKERY_PG_BIN at a directory holding initdb and postgres.';

const READY_TIMEOUT_MS = 60_000;

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The directory holding initdb and postgres: ROOKERY_PG_BIN, then PATH (links
 * followed, as Debian keeps the binaries out of PATH), then the newest
 * /usr/lib/postgresql/<major>/bin. Null if none has both.
 */
export function findPostgresBin(): string | null {
  const candidates: string[] = [];
  if (process.env.ROOKERY_PG_BIN) candidates.push(process.env.ROOKERY_PG_BIN);
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const initdb = path.join(dir, 'initdb');
    if (isExecutable(initdb)) candidates.push(path.dirname(fs.realpathSync(initdb)));
  }
  const debian = '/usr/lib/postgresql';
  if (fs.existsSync(debian)) {
    const majors = fs
      .readdirSync(debian)
      .filter((name) => /^\d+(\.\d+)?$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    for (const major of majors) candidates.push(path.join(debian, major, 'bin'));
  }
  return (
    candidates.find(
      (dir) => isExecutable(path.join(dir, 'initdb')) && isExecutable(path.join(dir, 'postgres')),
    ) ?? null
  );
}

/** uid/gid of a system user, from /etc/passwd. */
function systemUser(name: string): { uid: number; gid: number } | null {
  let passwd: string;
  try {
    passwd = fs.readFileSync('/etc/passwd', 'utf8');
  } catch {
    return null;
  }
  for (const line of passwd.split('\n')) {
    const [user, , uid, gid] = line.split(':');
    if (user === name && uid !== undefined && gid !== undefined)
      return { uid: Number(uid), gid: Number(gid) };
  }
  return null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function run(
  file: string,
  args: string[],
  identity: { uid: number; gid: number } | null,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
      ...(identity ?? {}),
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(new Error(`${path.basename(file)} failed (${signal ?? `exit ${code}`}):\n${output.trim()}`));
    });
  });
}

/**
 * Runs the postmaster on `dataDir` (127.0.0.1:`port` and a Unix socket in `socketDir`) and resolves once it
 * accepts connections; a server that does not get there is killed.
 */
async function startPostmaster(
  bin: string,
  dataDir: string,
  port: number,
  socketDir: string,
  env: NodeJS.ProcessEnv,
  identity: { uid: number; gid: number } | null,
  durable: boolean,
): Promise<ChildProcess> {
  // Tests throw the data away, so they skip the flushes; a durable server keeps PostgreSQL's defaults.
  const unsafe = durable
    ? []
    : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'];
  const started = spawn(
    path.join(bin, 'postgres'),
    [
      '-D',
      dataDir,
      '-p',
      String(port),
      '-k',
      socketDir,
      '-c',
      'listen_addresses=127.0.0.1',
      ...unsafe,
      '-c',
      'max_connections=200',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env, ...(identity ?? {}) },
  );
  try {
    await new Promise<void>((resolve, reject) => {
      let log = '';
      const timer = setTimeout(() => {
        reject(new Error(`PostgreSQL did not become ready within ${READY_TIMEOUT_MS} ms:\n${log.trim()}`));
      }, READY_TIMEOUT_MS);
      const onData = (chunk: Buffer) => {
        log += chunk.toString();
        if (log.includes('database system is ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      };
      started.stderr?.on('data', onData);
      started.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      started.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`PostgreSQL exited while starting (${signal ?? `exit ${code}`}):\n${log.trim()}`));
      });
    });
  } catch (error) {
    if (started.exitCode === null && started.signalCode === null) {
      const exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
      started.kill('SIGKILL');
      await exited;
    }
    throw error;
  }
  // Keep draining its log so a chatty server never blocks on a full pipe.
  started.stderr?.removeAllListeners('data');
  started.stderr?.resume();
  return started;
}

/** Sends `signal` to a running server and resolves once it exited. */
async function endPostmaster(server: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  server.kill(signal);
  await exited;
}

export interface StartPostgresOptions {
  /**
   * PostgreSQL's own durability defaults (fsync, synchronous_commit and full_page_writes on), for
   * benchmarks that compare durable writes; by default they are off, as tests need no flushes.
   */
  durable?: boolean;
}

/** Starts a fresh PostgreSQL server; call stop() when done (it also dies with this process). */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const durable = options.durable ?? false;
  const bin = findPostgresBin();
  if (!bin) throw new Error(INSTALL_HINT);

  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const identity = root ? systemUser('postgres') : null;
  if (root && !identity) {
    throw new Error(
      'PostgreSQL refuses to run as root and there is no `postgres` system user to run it as. ' +
        'Installing the Debian package (`apt-get install -y --no-install-recommends postgresql`) creates it, ' +
        'or create one with `useradd --system postgres`.',
    );
  }

  // os.tmpdir(), not ROOKERY_TEST_TMP: the server's user must be able to reach it.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rookery-pg-'));
  const dataDir = path.join(dir, 'data');
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C' };
  if (identity) {
    fs.chownSync(dir, identity.uid, identity.gid);
    env.HOME = dir;
  }

  let child: ChildProcess | null = null;
  const killOnExit = () => child?.kill('SIGKILL');
  try {
    await run(
      path.join(bin, 'initdb'),
      ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      identity,
      env,
    );
    const port = await freePort();
    let started = await startPostmaster(bin, dataDir, port, dir, env, identity, durable);
    child = started;
    process.once('exit', killOnExit);

    const connectionStringFor = (database: string) =>
      `postgresql://postgres@127.0.0.1:${port}/${encodeURIComponent(database)}`;
    let stopping: Promise<void> | null = null;
    let databases = 0;
    // createdb/dropdb from the same installation, over TCP with trust authentication: no client library needed here.
    const client = (tool: 'createdb' | 'dropdb', args: string[]) =>
      run(
        path.join(bin, tool),
        ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', ...args],
        null,
        env,
      );
    return {
      connectionString: connectionStringFor('postgres'),
      port,
      socketDir: dir,
      connectionStringFor,
      async freshDatabase(prefix) {
        databases += 1;
        const name = `${prefix}_${process.pid}_${databases}`;
        await client('createdb', [name]);
        return {
          url: connectionStringFor(name),
          drop: () => client('dropdb', ['--force', name]),
        };
      },
      // SIGINT: fast shutdown, as an outage or a restart would cut the clients, with the data kept.
      shutDown: () => endPostmaster(started, 'SIGINT'),
      async start() {
        if (started.exitCode === null && started.signalCode === null)
          throw new Error('PostgreSQL is running: shutDown() first');
        started = await startPostmaster(bin, dataDir, port, dir, env, identity, durable);
        child = started;
      },
      stop() {
        stopping ??= (async () => {
          process.removeListener('exit', killOnExit);
          // SIGQUIT: immediate shutdown; the data is thrown away anyway.
          await endPostmaster(started, 'SIGQUIT');
          remove();
        })();
        return stopping;
      },
    };
  } catch (error) {
    process.removeListener('exit', killOnExit);
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child?.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await exited;
    }
    remove();
    throw error;
  }
}
