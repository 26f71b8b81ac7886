// Escaping the sandbox that runs a tenant's JavaScript index code, end to end through the real gateway:
// reaching Node's `process` or `require` directly, through globalThis, through a constructor's
// constructor (`constructor.constructor('return process')()`, the classic vm escape), through
// Function('return this'), eval, dynamic import and a stack trace's frames. Each attack document must
// fail alone as an index error naming it, with the reason; the innocent documents are indexed; and the
// tenant keeps answering with its data intact. Infinite loops and huge allocations are in
// indexer.adversarial.test.ts (README.md beside this file).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client, Stack } from '../test-fixtures/stack.js';
import { startStack } from '../test-fixtures/stack.js';

let stack: Stack;
let admin: Client;

beforeAll(async () => {
  stack = await startStack();
  admin = await stack.tenantAdmin({ id: 'escaper', name: 'Escaper' }, 'escaper-admin');
  expect((await admin.call('PUT', '/admin/databases', { Name: 'box' })).status).toBe(201);
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

/** Each attack: the map's branch for documents of that kind, and what the index error must say. */
const ATTACKS: readonly [kind: string, code: string, error: RegExp][] = [
  ['process', 'return { R: process.pid };', /process is not defined/],
  ['require', "return { R: require('fs').readFileSync('/etc/passwd', 'utf8') };", /require is not defined/],
  ['global-process', 'return { R: globalThis.process.pid };', /Cannot read properties of undefined/],
  [
    'doc-constructor',
    "return { R: a.constructor.constructor('return process')().pid };",
    /process is not defined/,
  ],
  [
    'arrow-constructor',
    "return { R: (() => 0).constructor('return process')().pid };",
    /process is not defined/,
  ],
  [
    'function-this',
    "return { R: Function('return this')().process.env };",
    /Cannot read properties of undefined/,
  ],
  ['eval', "return { R: eval('process').pid };", /process is not defined/],
  ['dynamic-import', "return { R: import('node:fs') };", /Not supported/],
  [
    'stack-frames',
    'Error.prepareStackTrace = (e, frames) => frames.map((f) => f.getThis()); const t = new Error().stack.find((x) => x && x.process); return { R: t.process.pid };',
    /Cannot read properties of undefined/,
  ],
];

const INNOCENT = ['a/1', 'a/2'];

describe('escapes from the index sandbox', () => {
  let started: { pid: number | null; starts: number; crashes: number };
  beforeAll(async () => {
    expect((await admin.call('GET', '/databases/box/stats')).status).toBe(200);
    const info = stack.supervisor.info('escaper');
    started = { pid: info.pid, starts: info.starts, crashes: info.crashes };
    expect(started.pid).not.toBeNull();
  });

  it('fails each escape as an index error of its own document; the innocent documents are indexed', async () => {
    const commands = [
      ...INNOCENT.map((Id) => ({
        Type: 'PUT',
        Id,
        Document: { Kind: 'innocent', '@metadata': { '@collection': 'Attempts' } },
      })),
      ...ATTACKS.map(([kind]) => ({
        Type: 'PUT',
        Id: `attack/${kind}`,
        Document: { Kind: kind, '@metadata': { '@collection': 'Attempts' } },
      })),
    ];
    expect((await admin.call('POST', '/databases/box/bulk_docs', { Commands: commands })).status).toBe(201);
    const branches = ATTACKS.map(([kind, code]) => `if (a.Kind === '${kind}') { ${code} }`).join(' ');
    const put = await admin.call('PUT', '/databases/box/indexes', {
      Name: 'Attempts/All',
      Maps: [`map('Attempts', a => { ${branches} return { R: 'innocent' }; })`],
    });
    expect(put.status, put.text).toBe(201);

    const rql = encodeURIComponent("from index 'Attempts/All'");
    const query = await admin.call(
      'GET',
      `/databases/box/queries?waitForNonStaleResults=true&waitForNonStaleResultsTimeoutMs=60000&query=${rql}`,
    );
    expect(query.status, query.text).toBe(200);
    const ids = (query.json.Results as { '@metadata': { '@id': string } }[]).map(
      (r) => r['@metadata']['@id'],
    );
    expect(ids.sort()).toEqual(INNOCENT);

    const stats = await admin.call(
      'GET',
      `/databases/box/indexes/stats?name=${encodeURIComponent('Attempts/All')}`,
    );
    expect(stats.status).toBe(200);
    const errors = stats.json.Errors as { Document: string | null; Error: string }[];
    expect(errors.map((e) => e.Document).sort()).toEqual(ATTACKS.map(([kind]) => `attack/${kind}`).sort());
    for (const [kind, , reason] of ATTACKS) {
      const error = errors.find((e) => e.Document === `attack/${kind}`);
      expect({ kind, error: error?.Error }).toEqual({ kind, error: expect.stringMatching(reason) });
    }
  });

  it('keeps the tenant up: the same process, never crashed, answers, its data intact, and takes writes', async () => {
    const info = stack.supervisor.info('escaper');
    expect({ pid: info.pid, starts: info.starts, crashes: info.crashes }).toEqual(started);
    const read = await admin.call('GET', '/databases/box/docs?id=a/1');
    expect(read.status).toBe(200);
    const write = await admin.call('PUT', '/databases/box/docs?id=after/1', {
      Kind: 'after',
      '@metadata': { '@collection': 'Later' },
    });
    expect(write.status).toBe(201);
    expect((await admin.call('GET', '/databases/box/docs?id=after/1')).status).toBe(200);
  });
});
