// A second process on the same control file (as the gateway and the CLI are
// beside the control plane): opens it (racing the others to migrate a new
// file), creates the shared tenant if nobody has, adds usage and claims TOTP
// steps, then prints how many claims it won.
import { RookeryError } from '@rookery/protocol';
import { openSqliteControlStore } from '../index.js';

const [file] = process.argv.slice(2);
if (!file) throw new Error('usage: sqlite-child.ts <file> <n>');

const store = await openSqliteControlStore(file);
// Whoever creates the tenant creates its one principal; the others wait for it. (Each creating one when
// it found none let two processes claim their TOTP steps for two different principals.)
let created = false;
try {
  await store.createTenant({ id: 'shared', name: 'Shared' });
  created = true;
} catch (error) {
  if (!(error instanceof RookeryError && error.code === 'TenantAlreadyExists')) throw error;
}
if (created) {
  await store.createPrincipal({
    tenantId: 'shared',
    kind: 'person',
    name: 'p',
    role: { kind: 'tenant-admin' },
  });
}
let principal = (await store.listPrincipals('shared'))[0];
while (!principal) {
  await new Promise((resolve) => setTimeout(resolve, 5));
  principal = (await store.listPrincipals('shared'))[0];
}

let wins = 0;
for (let i = 0; i < 50; i += 1) {
  await store.addUsage([
    { tenantId: 'shared', minute: 0, requests: 1, bytesIn: 10, bytesOut: 0, workUnits: 0 },
  ]);
  if (i < 10 && (await store.claimTotpStep(principal.id, 1_000 + i))) wins += 1;
}
await store.close();
process.stdout.write(`${JSON.stringify({ wins })}\n`);
