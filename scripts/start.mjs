// `npm start`: install what is missing, build, start the Rookery tenant service
// on embedded defaults, create a first database and print how to connect.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ensureDependencies, root, runPnpm, step } from './lib/bootstrap.mjs';

ensureDependencies();
step('Building');
runPnpm(['exec', 'turbo', 'run', 'build', '--output-logs=errors-only']);

const dataDir = process.env.ROOKERY_DATA ?? path.join(root, '.rookery', 'data');
step(`Starting the tenant service (data in ${dataDir})`);
const child = spawn(process.execPath, [path.join(root, 'services', 'tenant', 'dist', 'main.js')], {
  env: { ROOKERY_DATA: dataDir, ROOKERY_PORT: '8080', ...process.env },
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

child.once('message', async ({ address }) => {
  const created = await fetch(`${address}/admin/databases`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ Name: 'demo' }),
  });
  if (created.status !== 201 && created.status !== 409) {
    process.stderr.write(`Could not create the demo database: ${created.status} ${await created.text()}\n`);
  }
  process.stdout.write(`
Rookery is running at ${address} with a database named "demo". Try:

  curl -X PUT '${address}/databases/demo/docs?id=users/1-A' \\
       -H 'content-type: application/json' \\
       -d '{"Name": "Ada Lovelace", "@metadata": {"@collection": "Users"}}'

  curl '${address}/databases/demo/docs?id=users/1-a'
  curl '${address}/databases/demo/stats'

Create more databases with:  curl -X PUT ${address}/admin/databases -H 'content-type: application/json' -d '{"Name": "shop"}'
Stop with Ctrl+C (queued writes are committed before exit).
`);
});
