// What OpenTofu would put on the machines actually runs: envs/local renders a small fleet's configuration
// through modules/node-config (the module the AWS user data writes from), `tofu apply` of outputs only. This
// test writes exactly those files, plays the secrets fetcher (rookery-secrets.service: the secret variables
// into the rendered secrets file, the secret files where the rendering says), and starts every node as its
// rendered systemd unit says: its ExecStart in its WorkingDirectory with its EnvironmentFiles and nothing
// else. Local values are only the module's inputs (directories, ports, the Node binary), never edits of the
// output. Then traffic through both gateways over mutual TLS: a document written through one and read through
// the other, then writes and reads through both while the owning host is drained with `rookery host drain`
// (the tenant moves to another host), and afterwards every acknowledged write read back through each gateway.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bootstrap } from '@rookery/cli';
import { makeTempDir, startPostgres } from '@rookery/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { callGateway } from '../../../../scripts/lib/gateway-call.mjs';
import { ensureTofu, infraEnv, terraformDir } from '../../../../scripts/lib/infra-tools.mjs';
import { stopProcess } from '../../../../scripts/lib/local-fleet.mjs';
import { firstPortInUse } from '../../../../scripts/lib/ports.mjs';
import { spawnReady } from '../../../../scripts/lib/services.mjs';

const repoRoot = path.resolve(terraformDir, '..', '..');
// [8]'s fleet: three hosts (a drained one's tenants have two to go to), two gateways behind the load balancer.
const HOSTS = 3;
const GATEWAYS = 2;
const TENANT = 'acme';

/** envs/local's `nodes` output, as `tofu output -json` prints it. */
const NodesSchema = z.record(
  z.string(),
  z.object({
    role: z.enum(['gateway', 'host', 'worker']),
    files: z.record(z.string(), z.string()),
    secrets_env_file: z.string(),
    secret_variables: z.array(z.string()),
    secret_files: z.record(z.string(), z.string()),
    unit: z.string(),
  }),
);
type Node = z.infer<typeof NodesSchema>[string];

/** What systemd reads of a unit to start it: the working directory, the environment files, the command. */
function unitCommand(unit: string) {
  const values = (key: string) =>
    unit
      .split('\n')
      .filter((line) => line.startsWith(`${key}=`))
      .map((line) => line.slice(key.length + 1));
  const [workingDirectory] = values('WorkingDirectory');
  const [execStart] = values('ExecStart');
  const [timeoutStopSec] = values('TimeoutStopSec');
  if (workingDirectory === undefined || execStart === undefined || timeoutStopSec === undefined)
    throw new Error(`not a service unit:\n${unit}`);
  return {
    workingDirectory,
    timeoutStopSec: Number(timeoutStopSec),
    // `-file`: optional, as systemd reads it.
    environmentFiles: values('EnvironmentFile').map((f) =>
      f.startsWith('-') ? { file: f.slice(1), optional: true } : { file: f, optional: false },
    ),
    // node-config refuses values that would need quoting, so the command line splits on spaces.
    argv: execStart.split(' '),
  };
}

/**
 * `systemctl stop`: SIGTERM, and SIGKILL once the unit's TimeoutStopSec has passed (the node would be
 * killed on a machine too). Answers how the process ended: `exit 0` is a clean stop.
 */
async function stopUnit(child: ChildProcess, timeoutStopSec: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const stopped = stopProcess(child);
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), timeoutStopSec * 1000);
  });
  const outcome = await Promise.race([stopped, late]);
  clearTimeout(timer);
  if (outcome === 'late') {
    child.kill('SIGKILL');
    await stopped;
    return `killed after TimeoutStopSec=${timeoutStopSec}`;
  }
  return child.signalCode === null ? `exit ${child.exitCode}` : `signal ${child.signalCode}`;
}

/** KEY=value lines (systemd's EnvironmentFile): comments and blank lines skipped. */
function readEnvFile(file: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const at = line.indexOf('=');
    env[line.slice(0, at)] = line.slice(at + 1);
  }
  return env;
}

/** A base port whose whole block (envs/local/variables.tf, base_port) is free now. */
async function freeBasePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + 1000 * Math.floor(Math.random() * 40);
    const offsets = [
      ...Array.from({ length: HOSTS }, (_, i) => [1 + i, 301 + i]).flat(),
      ...Array.from({ length: GATEWAYS }, (_, i) => [101 + i, 151 + i, 401 + i]).flat(),
      201,
    ];
    const clash = await firstPortInUse(
      offsets.map((o) => ({
        name: 'node',
        variable: 'base_port',
        host: '127.0.0.1',
        port: String(base + o),
      })),
    );
    if (clash === null) return base;
  }
  throw new Error('no free block of ports for the local fleet');
}

describe("envs/local's rendered configuration runs a fleet", () => {
  const tmp = makeTempDir('rookery-rendered-fleet-');
  const cleanups: (() => Promise<void>)[] = [];
  // Room for every unit's TimeoutStopSec when a failed test leaves them all running.
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    tmp.cleanup();
  }, 300_000);

  // The suite builds OpenTofu when it is missing, as its infrastructure step does: minutes cold, at nice 19.
  let tofu = '';
  beforeAll(() => {
    tofu = ensureTofu();
  }, 3_600_000);

  it('three hosts, two gateways and a worker from the rendered files: traffic through both gateways over mutual TLS while a drain moves the tenant, every acknowledged write read back', async () => {
    const root = path.join(tmp.dir, 'fleet');
    const env = { ...infraEnv(), TF_DATA_DIR: path.join(tmp.dir, 'tofu-data') };
    const tf = (args: string[]) =>
      execFileSync('nice', ['-n', '19', tofu, ...args], {
        cwd: path.join(terraformDir, 'envs', 'local'),
        env,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    const state = `-state=${path.join(tmp.dir, 'terraform.tfstate')}`;
    tf(['init', '-backend=false', '-input=false', '-no-color']);
    tf([
      'apply',
      '-auto-approve',
      '-input=false',
      '-no-color',
      state,
      `-var=root_dir=${root}`,
      `-var=repo_dir=${repoRoot}`,
      `-var=node_binary=${process.execPath}`,
      `-var=hosts=${HOSTS}`,
      `-var=gateways=${GATEWAYS}`,
      `-var=base_port=${await freeBasePort()}`,
    ]);
    const nodes = NodesSchema.parse(JSON.parse(tf(['output', '-json', state, 'nodes'])));
    const byRole = (role: Node['role']) =>
      Object.entries(nodes)
        .filter(([, n]) => n.role === role)
        .sort(([a], [b]) => a.localeCompare(b));
    expect(byRole('host')).toHaveLength(HOSTS);
    expect(byRole('gateway')).toHaveLength(GATEWAYS);

    // The control store, and what an operator makes once (docs/operations.md, "Secrets"): the CA, the master
    // key, the first tenant and its admin's certificate, by Rookery's own bootstrap.
    const postgres = await startPostgres();
    cleanups.push(() => postgres.stop());
    const operatorDir = path.join(tmp.dir, 'operator');
    const admin = await bootstrap({
      dataDir: operatorDir,
      tenantId: TENANT,
      databaseUrl: postgres.connectionString,
    });
    const secrets: Record<string, string> = {
      ROOKERY_CONTROL_DATABASE_URL: postgres.connectionString,
      ROOKERY_INTERNAL_TOKEN: randomBytes(32).toString('hex'),
    };

    // The rendered files as the user data writes them, and the secrets as rookery-secrets.service does.
    for (const node of Object.values(nodes)) {
      for (const [file, content] of Object.entries(node.files)) {
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, content);
      }
      const secretLines = node.secret_variables.map((name) => `${name}=${secrets[name]}\n`).join('');
      fs.mkdirSync(path.dirname(node.secrets_env_file), { recursive: true });
      fs.writeFileSync(node.secrets_env_file, secretLines, { mode: 0o600 });
      // The secret's `files` are named relative to a data directory, as the bootstrap laid them out.
      for (const [file, name] of Object.entries(node.secret_files)) {
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.copyFileSync(path.join(operatorDir, name), file);
      }
    }

    const started: { name: string; child: ChildProcess; timeoutStopSec: number }[] = [];
    /** Stops every node still running, the last started first (the hosts after what reaches them). */
    const stopAll = async () => {
      const outcomes: Record<string, string> = {};
      for (const { name, child, timeoutStopSec } of started.splice(0).reverse())
        outcomes[name] = await stopUnit(child, timeoutStopSec);
      return outcomes;
    };
    cleanups.push(async () => {
      await stopAll();
    });
    const logs = path.join(tmp.dir, 'logs');
    fs.mkdirSync(logs);
    /** Starts one node exactly as its unit says; resolves with its ready message. */
    async function start(name: string, node: Node) {
      const { workingDirectory, environmentFiles, argv, timeoutStopSec } = unitCommand(node.unit);
      // systemd gives a unit no environment of its own beyond PATH and the like: nothing of this test's.
      const nodeEnv: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
      for (const { file, optional } of environmentFiles) {
        if (optional && !fs.existsSync(file)) continue;
        Object.assign(nodeEnv, readEnvFile(file));
      }
      const [command, ...args] = argv as [string, ...string[]];
      const log = fs.openSync(path.join(logs, `${name}.log`), 'w');
      const { child, ready } = spawnReady(name, command, args, {
        env: nodeEnv,
        cwd: workingDirectory,
        stdio: log,
      });
      started.push({ name, child, timeoutStopSec });
      try {
        return (await ready) as Record<string, unknown>;
      } catch (error) {
        throw new Error(
          `${(error as Error).message}\n${fs.readFileSync(path.join(logs, `${name}.log`), 'utf8')}`,
        );
      }
    }
    // Each role's nodes start at once (as an auto-scaling group launches them), the hosts first: every node
    // has its own directories, so nothing orders them but what reaches what. (One after another they took
    // most of this test's time on a loaded machine.)
    await Promise.all(byRole('host').map(([name, node]) => start(name, node)));
    const [gateways] = await Promise.all([
      Promise.all(
        byRole('gateway').map(async ([name, node]) =>
          z.object({ url: z.string() }).parse(await start(name, node)),
        ),
      ),
      Promise.all(byRole('worker').map(([name, node]) => start(name, node))),
    ]);
    const urls = gateways.map((g) => g.url);
    const [first, second] = urls as [string, string];
    expect(new Set(urls).size).toBe(GATEWAYS);

    // The load balancer's check, on the health port each gateway's env file names: plain HTTP, no certificate.
    for (const [, gatewayNode] of byRole('gateway')) {
      const healthPort = /^ROOKERY_GATEWAY_HEALTH_PORT=(\d+)$/m.exec(
        Object.values(gatewayNode.files).join('\n'),
      )?.[1];
      expect(healthPort).toBeDefined();
      const health = await fetch(`http://127.0.0.1:${healthPort}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });
    }

    // The first request places the tenant and starts it: a loaded machine may answer TenantStarting first.
    await expect
      .poll(
        async () => (await callGateway(first, admin, 'PUT', '/admin/databases', { Name: 'shop' })).status,
        { timeout: 120_000, interval: 500 },
      )
      .toBe(201);
    // Written through one gateway, read through the other: both route to the same owner by its placement.
    const written = await callGateway(first, admin, 'PUT', '/databases/shop/docs?id=orders/0', order(0));
    expect(written.status).toBe(201);
    const read = await callGateway(second, admin, 'GET', '/databases/shop/docs?id=orders/0');
    expect(read.status).toBe(200);
    expect(read.body).toContain(order(0).Customer);
    // Readers at once through both gateways, as traffic comes: the gateways open more connections to the
    // tenant's host, which hands them to the running tenant's process (the relay's hand-off) — what a drain
    // must then move away from.
    const readers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        callGateway(urls[i % GATEWAYS]!, admin, 'GET', '/databases/shop/docs?id=orders/0'),
      ),
    );
    expect(readers.map((r) => r.status)).toEqual(Array(8).fill(200));

    // The operator drains the owner, as a rolling upgrade does (docs/operations.md, "Roll an upgrade").
    const cliEnv = {
      ...process.env,
      ROOKERY_DATA: operatorDir,
      ROOKERY_CONTROL_DATABASE_URL: postgres.connectionString,
    };
    const hostList = async () => {
      const listed = await rookery(cliEnv, '--json', 'host', 'list');
      expect(listed.status, listed.stderr).toBe(0);
      return HostListSchema.parse(JSON.parse(listed.stdout)).hosts;
    };
    const owner = (await hostList()).find((h) => h.placements > 0);
    expect(owner?.hostId).toMatch(/^host-[1-3]$/);

    // Traffic while the drain runs: one writer alternating the gateways, each write then read through the
    // other gateway. A write the fleet acknowledged (201) must survive the move; while the tenant moves the
    // gateways answer 503 with a Retry-After (the client retries), never anything else.
    const acknowledged = [0];
    const refused: string[] = [];
    let draining = true;
    const traffic = (async () => {
      for (let n = 1; draining; n++) {
        const via = urls[n % GATEWAYS]!;
        const put = await callGateway(via, admin, 'PUT', `/databases/shop/docs?id=orders/${n}`, order(n));
        if (put.status !== 201) {
          refused.push(`PUT ${put.status} ${problemCode(put.body)}`);
          continue;
        }
        acknowledged.push(n);
        const get = await callGateway(
          urls[(n + 1) % GATEWAYS]!,
          admin,
          'GET',
          `/databases/shop/docs?id=orders/${n}`,
        );
        if (get.status !== 200) refused.push(`GET ${get.status} ${problemCode(get.body)}`);
        else expect(get.body).toContain(order(n).Customer);
      }
    })();
    const drained = await rookery(cliEnv, 'host', 'drain', owner!.hostId, '--wait', '120').finally(() => {
      draining = false;
    });
    await traffic;
    expect(drained.status, drained.stderr).toBe(0);
    const after = await hostList();
    expect(after.find((h) => h.hostId === owner!.hostId)?.placements).toBe(0);
    expect(
      after
        .filter((h) => h.hostId !== owner!.hostId)
        .map((h) => h.placements)
        .sort(),
    ).toEqual([0, 1]);
    for (const answer of refused) expect(answer).toMatch(/^(PUT|GET) 503 Tenant(Unavailable|Starting)$/);

    // Through each gateway, once the new owner serves: every acknowledged write, read back in one request.
    const ids = acknowledged.map((n) => `id=orders/${n}`).join('&');
    for (const url of urls) {
      await expect
        .poll(async () => (await callGateway(url, admin, 'GET', `/databases/shop/docs?${ids}`)).status, {
          timeout: 120_000,
          interval: 500,
        })
        .toBe(200);
      const all = ResultsSchema.parse(
        JSON.parse((await callGateway(url, admin, 'GET', `/databases/shop/docs?${ids}`)).body),
      );
      expect(all.Results.map((doc) => doc?.Customer)).toEqual(acknowledged.map((n) => order(n).Customer));
    }
    // And the tenant takes writes on its new host, through each gateway.
    for (const [i, url] of urls.entries()) {
      const put = await callGateway(url, admin, 'PUT', `/databases/shop/docs?id=after/${i}`, order(i));
      expect(put.status).toBe(201);
    }

    // Every node stops on SIGTERM within its unit's TimeoutStopSec, as systemd stops it, the drained host too.
    expect(await stopAll()).toEqual(Object.fromEntries(Object.keys(nodes).map((name) => [name, 'exit 0'])));
  }, 900_000);
});

/** A document whose body says which write it was. */
function order(n: number) {
  return { Customer: `Customer ${n}`, Lines: n };
}

/** A problem answer's code (RFC 9457 body), or the body's start when it is not one. */
function problemCode(body: string): string {
  try {
    return z.object({ code: z.string() }).parse(JSON.parse(body)).code;
  } catch {
    return body.slice(0, 120);
  }
}

/** The operator's CLI (`./rookery`), run without blocking this process: the fleet's traffic goes on meanwhile. */
function rookery(env: NodeJS.ProcessEnv, ...args: string[]) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'rookery'), ...args], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** `GET …/docs?id=…&id=…`: one result per id asked, null when missing. */
const ResultsSchema = z.object({
  Results: z.array(z.object({ Customer: z.string() }).passthrough().nullable()),
});

/** `rookery host list --json`. */
const HostListSchema = z.object({
  hosts: z.array(z.object({ hostId: z.string(), placements: z.number() }).passthrough()),
});
