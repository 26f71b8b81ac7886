// node-config renders exactly the variables the services read: its lists must be the ENV_NAMES of
// services/<role>/src/config.ts (and, for a host, the tenant settings it passes on). A variable added
// to a service without the list fails here, naming it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVICE_NODE_FLAGS } from '../../../../scripts/lib/services.mjs';
import { loadFile, locals, repoRoot } from './hcl.js';

/** The quoted ROOKERY_* names between the line matching `blockStart` and the next `end`. */
function sourceNames(file: string, blockStart: RegExp, end: string): string[] {
  const text = readFileSync(path.join(repoRoot, file), 'utf8');
  const start = text.search(blockStart);
  if (start < 0) throw new Error(`${file}: no block matching ${blockStart}`);
  const block = text.slice(start, text.indexOf(end, start));
  return [...block.matchAll(/'(ROOKERY_[A-Z0-9_]+)'/g)].map((m) => m[1] as string);
}

const envNames = (role: string) => sourceNames(`services/${role}/src/config.ts`, /const ENV_NAMES\b/, '\n};');

// On a failure: add the new variable to (or remove the old one from) local.known_variables in
// infra/terraform/modules/node-config/main.tf, and render it there if a fleet must set it.
describe('node-config knows exactly the variables each service reads', async () => {
  const lists = locals(await loadFile('modules/node-config/main.tf')).known_variables as Record<
    string,
    string[]
  >;

  it('gateway: services/gateway/src/config.ts', () => {
    expect([...(lists.gateway ?? [])].sort()).toEqual([...new Set(envNames('gateway'))].sort());
  });

  it('host: services/host/src/config.ts and the tenant settings of services/host/src/tenant-env.ts', () => {
    const tenantSettings = sourceNames('services/host/src/tenant-env.ts', /TENANT_SETTINGS\b/, ']);');
    expect(tenantSettings.length).toBeGreaterThan(5);
    expect([...(lists.host ?? [])].sort()).toEqual(
      [...new Set([...envNames('host'), ...tenantSettings])].sort(),
    );
  });

  it('worker: services/worker/src/config.ts', () => {
    expect([...(lists.worker ?? [])].sort()).toEqual([...new Set(envNames('worker'))].sort());
  });
});

// The systemd units run Node with the flags every service runs with under `npm start` and the tests
// (isolated-vm, the index sandbox, needs --no-node-snapshot): one list, scripts/lib/services.mjs's.
describe("node-config's unit runs Node as the services run", () => {
  it('ExecStart carries SERVICE_NODE_FLAGS', () => {
    const unit = readFileSync(
      path.join(repoRoot, 'infra/terraform/modules/node-config/unit.service.tftpl'),
      'utf8',
    );
    const execStart = unit.split('\n').find((line) => line.startsWith('ExecStart='));
    expect(execStart).toBe(
      `ExecStart=\${node_binary} ${SERVICE_NODE_FLAGS.join(' ')} --enable-source-maps services/\${role}/dist/main.js`,
    );
  });
});
