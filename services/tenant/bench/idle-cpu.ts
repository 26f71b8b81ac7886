// `pnpm bench:idle-cpu`: the CPU an idle tenant and its indexer spend, in ms per second of wall time.
// A real tenant process (src/main.ts, mirrored, worker builds above 1,000 documents) with one database,
// 2,000 documents, two indexes caught up and a third awaiting a worker's build (the bench is the tenant's
// "host": it takes the build request and never answers it, as while a worker builds for minutes) is left alone; its and its indexer's user+system time are read from /proc/<pid>/stat before and after
// IDLE_SECONDS. That floor is what a host pays per tenant while a worker builds its index for minutes
// (issue [10]: host_cpu_s_new_index_worker). Prints one JSON line.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTempDir } from '@rookery/testkit';
import { startServer } from './server-process.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const IDLE_SECONDS = Number(process.env.IDLE_SECONDS ?? 20);
const DOCUMENTS = 2_000;
/** The first index copies to the mirror (taken once the mirror has its first snapshot) land before measuring. */
const SETTLE_SECONDS = Number(process.env.SETTLE_SECONDS ?? 15);
/** Clock ticks per second of /proc's utime and stime (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** User plus system CPU time of a process, in ticks (fields 14 and 15 of /proc/<pid>/stat). */
function cpuTicks(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** The process's children (the tenant's indexer). */
function childrenOf(pid: number): number[] {
  const text = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text === '' ? [] : text.split(' ').map(Number);
}

async function call(base: string, method: string, url: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${base}${url}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (response.status >= 400) throw new Error(`${method} ${url}: ${response.status} ${text}`);
  return text === '' ? null : JSON.parse(text);
}

async function main(): Promise<void> {
  const tmp = makeTempDir('rookery-idle-');
  const server = await startServer(path.join(here, '../src/main.ts'), {
    ROOKERY_DATA: path.join(tmp.dir, 'data'),
    ROOKERY_MIRROR: path.join(tmp.dir, 'mirror'),
    ROOKERY_TENANT_ID: 'idle',
    ROOKERY_HOST: '127.0.0.1',
    ROOKERY_PORT: '0',
    ROOKERY_LOG_LEVEL: 'warn',
    ROOKERY_INDEX_WORKER_THRESHOLD: String(DOCUMENTS / 2),
  });
  try {
    const base = server.url;
    await call(base, 'PUT', '/admin/databases', { Name: 'idle' });
    for (const [name, field] of [
      ['Users/ByName', 'Name'],
      ['Users/ByAge', 'Age'],
    ] as const)
      await call(base, 'PUT', '/databases/idle/indexes', {
        Name: name,
        Maps: [{ Collection: 'Users', Fields: { [field]: field } }],
      });
    for (let i = 0; i < DOCUMENTS; i += 500) {
      const commands = Array.from({ length: 500 }, (_, j) => ({
        Type: 'PUT',
        Id: `users/${i + j}`,
        Document: { Name: `User ${i + j}`, Age: (i + j) % 90, '@metadata': { '@collection': 'Users' } },
      }));
      await call(base, 'POST', '/databases/idle/bulk_docs', { Commands: commands });
    }
    for (const index of ['Users/ByName', 'Users/ByAge'])
      await call(
        base,
        'GET',
        `/databases/idle/queries?query=${encodeURIComponent(`from index '${index}' limit 1`)}&waitForNonStaleResults=true`,
      );
    // Above the threshold now: this one awaits a worker's build, which never comes.
    await call(base, 'PUT', '/databases/idle/indexes', {
      Name: 'Users/ByNameAndAge',
      Maps: [{ Collection: 'Users', Fields: { Name: 'Name', Age: 'Age' } }],
    });
    // Let the first index copies to the mirror and the mirror's own start settle before measuring.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_SECONDS * 1_000));
    const tenantPid = server.pid;
    const [indexerPid] = childrenOf(tenantPid);
    if (indexerPid === undefined) throw new Error('the tenant has no indexer process');
    const before = { tenant: cpuTicks(tenantPid), indexer: cpuTicks(indexerPid) };
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1_000));
    const seconds = (performance.now() - started) / 1_000;
    const msPerSecond = (ticks: number) =>
      Math.round(((ticks / TICKS_PER_SECOND) * 1_000 * 100) / seconds) / 100;
    const tenant = msPerSecond(cpuTicks(tenantPid) - before.tenant);
    const indexer = msPerSecond(cpuTicks(indexerPid) - before.indexer);
    console.log(
      JSON.stringify({
        idle_seconds: Math.round(seconds * 10) / 10,
        idle_cpu_ms_per_s_tenant: tenant,
        idle_cpu_ms_per_s_indexer: indexer,
        idle_cpu_ms_per_s_total: Math.round((tenant + indexer) * 100) / 100,
      }),
    );
  } finally {
    await server.stop();
    tmp.cleanup();
  }
}

await main();
