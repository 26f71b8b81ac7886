// What the gateway's benchmarks (gateway.ts, cluster.ts) share: their command-line numbers, the stage log
// and the closed-loop GET load whose rate both report.
import os from 'node:os';
import type { Pool } from 'undici';

/** `--<name> <number>` from the command line, or the fallback. */
export const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
/** Stages go to stderr: the last stdout line is the run's JSON. */
export const log = (m: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${m}\n`);
/** What a run's JSON says of the machine it ran on: figures from different machines do not compare. */
export const machine = () => ({
  cpus: os.cpus().length,
  model: os.cpus()[0]?.model.split(' ').slice(0, 2).join(' '),
  node: process.version,
});
/** GETs in flight at once (and keep-alive connections per pool) when measuring a rate. */
export const CONCURRENCY = 32;

/** One GET of `path`, its body read to the end; anything but 200 ends the run (a rate of errors is no rate). */
export async function get(pool: Pool, path: string): Promise<void> {
  const r = await pool.request({ method: 'GET', path });
  await r.body.dump();
  if (r.statusCode !== 200) throw new Error(`GET answered ${r.statusCode}`);
}

/** GETs per second over `n` GETs of `path()` (asked per GET: it may vary), CONCURRENCY at a time. */
export async function throughput(pool: Pool, n: number, path: () => string): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < n) await get(pool, path());
    }),
  );
  return Math.round(n / ((performance.now() - started) / 1000));
}
