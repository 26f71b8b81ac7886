// A real tenant process with hooks for the supervisor's tests: it records its start, can hold its start
// until a gate file exists (a slow start), can hold its SIGTERM until every tenant of a barrier got theirs
// (proving a parallel shutdown), and can exit on its own after it is ready (a crash loop). Then it runs the
// real tenant main: the tenant itself is never faked.
import fs from 'node:fs';
import path from 'node:path';

const env = process.env;

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

if (env.ROOKERY_TEST_STARTS_LOG) fs.appendFileSync(env.ROOKERY_TEST_STARTS_LOG, `${process.pid}\n`);
const gate = env.ROOKERY_TEST_START_GATE;
if (gate) await until(() => fs.existsSync(gate));

await import(env.ROOKERY_TEST_TENANT_MAIN!);

const barrier = env.ROOKERY_TEST_TERM_BARRIER;
if (barrier) {
  const count = Number(env.ROOKERY_TEST_TERM_BARRIER_COUNT);
  const real = process.listeners('SIGTERM');
  process.removeAllListeners('SIGTERM');
  process.once('SIGTERM', async () => {
    fs.writeFileSync(path.join(barrier, String(process.pid)), '');
    await until(() => fs.readdirSync(barrier).length >= count);
    for (const listener of real) listener('SIGTERM');
  });
}

const exitAfter = env.ROOKERY_TEST_EXIT_AFTER_READY_MS;
if (exitAfter) setTimeout(() => process.exit(3), Number(exitAfter));
