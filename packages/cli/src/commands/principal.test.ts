import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runRookery } from '../test-fixtures/run-cli.js';

let data: { dir: string; cleanup: () => void };
beforeEach(async () => {
  data = makeTempDir('rookery-cli-');
  await rookery('tenant', 'create', 'acme');
});
afterEach(() => data.cleanup());
const rookery = (...args: string[]) => runRookery(data.dir, args);

describe('rookery principal', () => {
  it('creates people and programs with per-database roles, lists and deletes them', async () => {
    const reader = await rookery(
      '--json',
      'principal',
      'create',
      '--tenant',
      'acme',
      '--kind',
      'person',
      '--name',
      'Ada',
      '--role',
      'db:shop=read-only',
      '--role',
      'db:orders=read-write',
    );
    expect(reader.code).toBe(0);
    expect(reader.json()).toMatchObject({
      tenantId: 'acme',
      kind: 'person',
      role: { kind: 'database', access: { shop: 'read-only', orders: 'read-write' } },
    });
    const operator = await rookery(
      '--json',
      'principal',
      'create',
      '--operator',
      '--kind',
      'program',
      '--name',
      'ops',
    );
    expect(operator.json()).toMatchObject({ tenantId: null, role: { kind: 'operator' } });

    const listed = await rookery('principal', 'list', '--tenant', 'acme');
    expect(listed.stdout).toMatch(/person\s+Ada\s+db:shop=read-only db:orders=read-write/);
    const operators = await rookery('--json', 'principal', 'list', '--operators');
    expect(operators.json<{ name: string }[]>().map((p) => p.name)).toEqual(['ops']);

    const id = reader.json<{ id: string }>().id;
    expect((await rookery('principal', 'delete', id)).code).toBe(0);
    expect((await rookery('principal', 'delete', id)).stderr).toMatch(/^PrincipalNotFound: /);
  });

  it('refuses roles it cannot read and contradictory flags', async () => {
    const person = ['principal', 'create', '--tenant', 'acme', '--kind', 'person', '--name', 'Bo'];
    const badRole = await rookery(...person, '--role', 'db:shop=write');
    expect([badRole.code, badRole.stderr]).toEqual([
      1,
      expect.stringMatching(/^InvalidRequest: --role: "db:shop=write": expected db:<name>=read-write/),
    ]);
    const mixed = await rookery(...person, '--role', 'tenant-admin', '--role', 'db:shop=read-only');
    expect(mixed.stderr).toMatch(/^InvalidRequest: --role: "tenant-admin"/);
    expect((await rookery(...person)).stderr).toMatch(/^InvalidRequest: --role: give tenant-admin/);
    const badKind = await rookery(
      'principal',
      'create',
      '--tenant',
      'acme',
      '--kind',
      'robot',
      '--name',
      'R2',
      '--role',
      'tenant-admin',
    );
    expect(badKind.stderr).toMatch(/^InvalidRequest: --kind: /);
    const both = await rookery(
      'principal',
      'create',
      '--tenant',
      'acme',
      '--operator',
      '--kind',
      'program',
      '--name',
      'x',
    );
    expect(both.stderr).toMatch(/^InvalidRequest: Give either --tenant <id> or --operator/);
    const missing = await rookery('principal', 'create', '--tenant', 'acme', '--kind', 'person');
    expect([missing.code, missing.stderr]).toEqual([
      1,
      expect.stringMatching(/^InvalidRequest: required option '--name <name>'/),
    ]);
    expect((await rookery('--json', 'principal', 'list', '--tenant', 'acme')).json()).toEqual([]);
  });
});
