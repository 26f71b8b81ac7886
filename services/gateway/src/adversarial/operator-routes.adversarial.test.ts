// Attacks on the operators' read of the fleet (GET /control/hosts, which the console's Hosts page reads), end
// to end through the real gateway over mutual TLS: a tenant admin, a per-database principal and a tenant
// admin's browser session asking for the hosts by the route itself and by spellings of it. Only an
// operator's certificate reads them (README.md beside this file).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedIn } from '../test-fixtures/browser-sessions.js';
import { type Stack, startStack } from '../test-fixtures/stack.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
  await stack.store.createTenant({ id: 'acme', name: 'Acme' });
  // A fleet of one registered host, with acme placed on it: what must not leak.
  await stack.store.acquireLease('host-secret', 'https://10.9.8.7:7443', 10, 600_000);
  await stack.store.placeTenant('acme');
}, 120_000);
afterAll(async () => stack?.close());

describe('the hosts of the fleet', () => {
  it('answers them to an operator only', async () => {
    const operator = await stack.program('ops', null, { kind: 'operator' });
    const listed = await operator.call('GET', '/control/hosts');
    expect(listed.status).toBe(200);
    expect(listed.json.hosts).toMatchObject([
      { hostId: 'host-secret', address: 'https://10.9.8.7:7443', placements: 1, state: 'active' },
    ]);

    const admin = await stack.program('acme-admin', 'acme');
    const reader = await stack.program('acme-reader', 'acme', {
      kind: 'database',
      access: { shop: 'read-only' },
    });
    const person = await signedIn(stack, 'ada', 'acme');
    const paths = [
      '/control/hosts',
      '/control/hosts/',
      '/control/hosts?tenant=acme',
      '/control/%68osts',
      '/CONTROL/hosts',
      '/control/tenants/acme/hosts',
      '/control/tenants/acme/../../control/hosts',
    ];
    const answers: string[] = [];
    for (const path of paths) {
      for (const [who, reply] of [
        ['admin', await admin.call('GET', path)],
        ['reader', await reader.call('GET', path)],
        ['person', await person.client.call('GET', path, undefined, { cookie: person.cookie })],
      ] as const) {
        expect(reply.text, `${who} ${path}`).not.toContain('10.9.8.7');
        expect(reply.text, `${who} ${path}`).not.toContain('host-secret');
        answers.push(`${who} ${path} ${reply.status} ${reply.json.code}`);
      }
    }
    // 403 for the route itself (whatever its spelling the router takes); 404 for paths that are no route.
    for (const answer of answers) expect(answer).toMatch(/ (403 Forbidden|404 RouteNotFound)$/);
    expect(answers.filter((answer) => answer.startsWith('admin /control/hosts '))).toEqual([
      'admin /control/hosts 403 Forbidden',
    ]);
  });
});
