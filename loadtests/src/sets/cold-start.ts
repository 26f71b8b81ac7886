// Tenants cold start: hundreds of tenants, each with a database and a document,
// put to sleep, then woken at random by k6/cold-start.js through an operator's
// certificate. Tenants stop after IDLE_STOP_MS without requests, so most reads
// find their tenant asleep.
import { setTimeout as delay } from 'node:timers/promises';
import { GatewayClient } from '../gateway-client.js';
import { log, ProgressBar } from '../log.js';
import { principalWithCertificate } from '../principals.js';
import { UNLIMITED_QUOTA, withControlStore } from '../stack.js';
import type { ScenarioSetDefinition } from './types.js';

const IDLE_STOP_MS = 5_000;
const DATABASE = 'db';
const DOCUMENT_ID = 'settings/1';
/** Tenants set up at once: each set-up wakes a tenant, which costs a process start. */
const SETUP_CONCURRENCY = 4;

const tenantId = (i: number) => `sleepy-${String(i).padStart(4, '0')}`;

export const coldStartSet: ScenarioSetDefinition = {
  script: 'cold-start.js',
  database: 'coldstart',
  stackEnv: () => ({ ROOKERY_IDLE_STOP_MS: String(IDLE_STOP_MS) }),
  async prepare(stack, _client, options) {
    const operator = await withControlStore(stack.dataDir, async (store) => {
      for (let i = 1; i <= options.tenants; i++) {
        await store.createTenant({ id: tenantId(i), name: tenantId(i), quota: UNLIMITED_QUOTA });
      }
      return principalWithCertificate(stack, store, {
        tenantId: null,
        kind: 'program',
        name: 'loadtest-operator',
        role: { kind: 'operator' },
      });
    });
    const client = new GatewayClient(stack.url, { caFile: stack.caFile, ...operator });
    try {
      const bar = new ProgressBar('tenants', options.tenants, 'tenants');
      let next = 1;
      let done = 0;
      await Promise.all(
        Array.from({ length: SETUP_CONCURRENCY }, async () => {
          for (let i = next++; i <= options.tenants; i = next++) {
            const base = `/tenants/${tenantId(i)}`;
            await client.expect('PUT', `${base}/admin/databases`, { Name: DATABASE }, [201]);
            await client.expect(
              'PUT',
              `${base}/databases/${DATABASE}/docs?id=${DOCUMENT_ID}`,
              { Theme: 'dark', '@metadata': { '@collection': 'Settings' } },
              [201],
            );
            bar.update(++done);
          }
        }),
      );
      bar.done();
    } finally {
      await client.close();
    }
    log(
      `waiting ${(IDLE_STOP_MS * 2) / 1000} s for the tenants to stop (idle stop after ${IDLE_STOP_MS / 1000} s)`,
    );
    await delay(IDLE_STOP_MS * 2);
    return {
      config: {
        coldStart: {
          tenants: Array.from({ length: options.tenants }, (_, i) => tenantId(i + 1)),
          database: DATABASE,
          documentId: DOCUMENT_ID,
          maxAttempts: 10,
        },
      },
      tlsAuth: { cert: operator.certFile, key: operator.keyFile },
      description: `${options.tenants} tenants, each stopped after ${IDLE_STOP_MS / 1000} s idle, read at random`,
    };
  },
};
