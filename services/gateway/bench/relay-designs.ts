// pnpm bench:relay-designs — which way of carrying a gateway's keep-alive GETs to a tenant on another host
// costs how much CPU, measured side by side before building one (issue [8]: relay_of_local ≥ 0.85). No
// Rookery service runs here: the "tenant" is a plain node:http server answering a document of the size the
// cluster benchmark reads (~0.5 KB), the "gateway" is this process's undici pool, so what differs between
// the designs is the transport alone:
//
// - local: the gateway on the tenant's Unix socket (one machine);
// - pipe: TLS (mutual, TLS 1.3) to a process of its own that pipes each connection to the tenant's
//   Unix socket — today's relay without its upgrade, which is paid once per connection;
// - tenant_tls: TLS ended by the process that serves HTTP (no process between): what handing the accepted
//   connection to the tenant gives, before the hand-off's own per-connection cost;
// - handoff: a front process reads the ClientHello, passes the TCP socket and those bytes to the tenant
//   over IPC (`child.send(message, socket)`), and the tenant ends TLS — the design end to end;
// - tenant_tls_aes128 / pipe_aes128: the same with TLS_AES_128_GCM_SHA256 instead of Node's default
//   preference (TLS_AES_256_GCM_SHA384).
//
// On a machine whose cores are saturated, throughput is CPU time per request; `cpu_us_per_get` splits it
// by process (client = the gateway's side). `of_local` is the median over rounds of each design's rate
// over local's in the same round. The last stdout line is one JSON object.
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { CertificateAuthority, createCertificateAuthority, issueServiceCertificate } from '@rookery/pki';
import { Pool } from 'undici';
import { arg, CONCURRENCY, get, log, machine, throughput } from './load.js';

const AES128 = 'TLS_AES_128_GCM_SHA256';
const here = fileURLToPath(import.meta.url);

interface Material {
  caPem: string;
  certPem: string;
  keyPem: string;
}
interface Setup {
  socketPath: string;
  server: Material;
}

// ── roles of the forked processes ──

/** The tenant stand-in: HTTP on a Unix socket, on TLS ports of its own, and over sockets handed to it. */
async function tenantRole(setup: Setup) {
  const body = Buffer.from(JSON.stringify({ Title: 'x'.repeat(400), Tags: ['a', 'b'], N: 1 }));
  const app = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    response.end(body);
  });
  app.keepAliveTimeout = 65_000;
  const tlsOptions = (ciphersuites?: string): tls.TlsOptions => ({
    key: setup.server.keyPem,
    cert: setup.server.certPem,
    ca: [setup.server.caPem],
    requestCert: true,
    rejectUnauthorized: true,
    minVersion: 'TLSv1.3',
    ...(ciphersuites ? { ciphersuites } : {}),
  });
  await new Promise<void>((resolve) => app.listen(setup.socketPath, resolve));
  // TLS ended here: each secure connection becomes a connection of the same HTTP server.
  const tlsPort = async (ciphersuites?: string) => {
    const server = tls.createServer(tlsOptions(ciphersuites), (secure) => app.emit('connection', secure));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as net.AddressInfo).port;
  };
  // A handed socket: the bytes its front already read (the ClientHello) are put back before TLS reads it.
  const secureContext = tls.createSecureContext(tlsOptions());
  process.on('message', (message: { handoff?: string }, socket?: net.Socket) => {
    if (!message.handoff || !socket) return;
    socket.unshift(Buffer.from(message.handoff, 'base64'));
    const secure = new tls.TLSSocket(socket, {
      isServer: true,
      secureContext,
      requestCert: true,
      rejectUnauthorized: true,
    });
    secure.on('error', () => secure.destroy());
    secure.once('secure', () => app.emit('connection', secure));
  });
  process.send?.({ tls: await tlsPort(), tlsAes128: await tlsPort(AES128) });
}

/** Today's relay without the upgrade: TLS ended here, bytes piped to the tenant's Unix socket. */
async function pipeRole(setup: Setup & { ciphersuites?: string }) {
  const server = tls.createServer(
    {
      key: setup.server.keyPem,
      cert: setup.server.certPem,
      ca: [setup.server.caPem],
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.3',
      ...(setup.ciphersuites ? { ciphersuites: setup.ciphersuites } : {}),
    },
    (secure) => {
      const tenant = net.connect(setup.socketPath);
      for (const [side, other] of [
        [secure, tenant],
        [tenant, secure],
      ] as const) {
        side.on('error', () => other.destroy());
        side.once('close', () => other.destroy());
      }
      secure.pipe(tenant);
      tenant.pipe(secure);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.send?.({ port: (server.address() as net.AddressInfo).port });
}

/** The hand-off's front: reads the first bytes (the ClientHello) and passes socket and bytes to its tenant. */
async function frontRole(setup: Setup) {
  const tenant = fork(here, ['tenant'], { execArgv: process.execArgv });
  tenant.send(setup);
  await new Promise((resolve) => tenant.once('message', resolve));
  const server = net.createServer((socket) => {
    socket.once('data', (hello: Buffer) => {
      socket.pause();
      tenant.send({ handoff: hello.toString('base64') }, socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.send?.({ port: (server.address() as net.AddressInfo).port, tenantPid: tenant.pid });
  process.on('disconnect', () => {
    tenant.kill();
    process.exit(0);
  });
}

// ── the benchmark ──

async function forkRole<T>(name: string, setup: object): Promise<{ child: ChildProcess; answer: T }> {
  const child = fork(here, [name], { execArgv: process.execArgv });
  child.send(setup);
  const answer = await new Promise<T>((resolve, reject) => {
    child.once('message', (m) => resolve(m as T));
    child.once('exit', (code) => reject(new Error(`${name} exited (${code})`)));
  });
  return { child, answer };
}

const CLOCK_TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());
function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

async function main() {
  const REQUESTS = arg('requests', 8_000);
  const ROUNDS = arg('rounds', 6);
  const caMaterial = await createCertificateAuthority({ commonName: 'Relay designs CA' });
  const ca = await CertificateAuthority.fromPem(caMaterial);
  const host = await issueServiceCertificate(ca, { service: 'host', hosts: ['localhost'], validDays: 1 });
  const gateway = await issueServiceCertificate(ca, { service: 'gateway', validDays: 1 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-designs-'));
  const setup: Setup = {
    socketPath: path.join(dir, 'tenant.sock'),
    server: { caPem: ca.certPem, certPem: host.certPem, keyPem: host.keyPem },
  };
  const children: ChildProcess[] = [];
  try {
    const tenant = await forkRole<{ tls: number; tlsAes128: number }>('tenant', setup);
    const pipe = await forkRole<{ port: number }>('pipe', setup);
    const pipeAes = await forkRole<{ port: number }>('pipe', { ...setup, ciphersuites: AES128 });
    const front = await forkRole<{ port: number; tenantPid: number }>('front', {
      ...setup,
      socketPath: path.join(dir, 'handoff.sock'),
    });
    children.push(tenant.child, pipe.child, pipeAes.child, front.child);
    const overTls = (port: number) =>
      new Pool(`https://localhost:${port}`, {
        connections: CONCURRENCY,
        connect: { ca: ca.certPem, cert: gateway.certPem, key: gateway.keyPem, servername: 'localhost' },
      });
    const tenantPid = tenant.child.pid!;
    const designs = {
      local: {
        pool: new Pool('http://localhost', { connections: CONCURRENCY, socketPath: setup.socketPath }),
        pids: [tenantPid],
      },
      pipe: { pool: overTls(pipe.answer.port), pids: [tenantPid, pipe.child.pid!] },
      pipe_aes128: { pool: overTls(pipeAes.answer.port), pids: [tenantPid, pipeAes.child.pid!] },
      tenant_tls: { pool: overTls(tenant.answer.tls), pids: [tenantPid] },
      tenant_tls_aes128: { pool: overTls(tenant.answer.tlsAes128), pids: [tenantPid] },
      handoff: { pool: overTls(front.answer.port), pids: [front.answer.tenantPid, front.child.pid!] },
    };
    type Design = keyof typeof designs;
    const names = Object.keys(designs) as Design[];
    const documentPath = () => '/docs?id=packages/1';
    for (const name of names) await throughput(designs[name].pool, 1_000, documentPath);
    const rates = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<Design, number[]>;
    const cpu = Object.fromEntries(names.map((n) => [n, { client: 0, servers: 0, gets: 0 }])) as Record<
      Design,
      { client: number; servers: number; gets: number }
    >;
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of r % 2 === 0 ? names : [...names].reverse()) {
        const { pool, pids } = designs[name];
        const before = pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
        const client = process.cpuUsage();
        rates[name].push(await throughput(pool, REQUESTS, documentPath));
        const used = process.cpuUsage(client);
        cpu[name].client += (used.user + used.system) / 1000;
        cpu[name].servers += pids.reduce((sum, pid) => sum + cpuMs(pid), 0) - before;
        cpu[name].gets += REQUESTS;
      }
      log(`round ${r + 1}: ${names.map((n) => `${n} ${rates[n].at(-1)}/s`).join(', ')}`);
    }
    await get(designs.handoff.pool, documentPath()); // the hand-off served real requests, not only refusals
    const perGet = (ms: number, gets: number) => Math.round((ms * 10_000) / gets) / 10;
    const result = Object.fromEntries(
      names.map((name) => {
        const { client, servers, gets } = cpu[name];
        return [
          name,
          {
            get_per_s: median(rates[name]),
            of_local: Math.round(median(rates[name].map((rate, i) => rate / rates.local[i]!)) * 100) / 100,
            cpu_us_per_get: {
              client: perGet(client, gets),
              servers: perGet(servers, gets),
              total: perGet(client + servers, gets),
            },
          },
        ];
      }),
    );
    for (const design of Object.values(designs)) await design.pool.close();
    console.log(
      JSON.stringify({
        bench: 'relay-designs',
        machine: { ...machine(), load: os.loadavg().map((l) => Math.round(l * 100) / 100) },
        requests: REQUESTS,
        rounds: ROUNDS,
        designs: result,
      }),
    );
  } finally {
    for (const child of children) child.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const role = ['tenant', 'pipe', 'front'].find((r) => r === process.argv[2]);
if (role) {
  const setup = await new Promise<Setup>((resolve) => process.once('message', (m) => resolve(m as Setup)));
  if (role === 'tenant') await tenantRole(setup);
  else if (role === 'pipe') await pipeRole(setup);
  else await frontRole(setup);
  process.on('disconnect', () => process.exit(0));
} else {
  await main();
}
