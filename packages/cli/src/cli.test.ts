import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnRookery } from './test-fixtures/run-cli.js';

let data: { dir: string; cleanup: () => void };
beforeEach(() => {
  data = makeTempDir('rookery-cli-');
});
afterEach(() => data.cleanup());
const rookery = (...args: string[]) => spawnRookery(data.dir, args);

describe('the rookery command', () => {
  it('prints help on stdout and exits 0', async () => {
    const help = await rookery('--help');
    expect(help.code).toBe(0);
    for (const command of ['tenant', 'database', 'principal', 'cert', 'totp', 'usage', 'bootstrap']) {
      expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
    expect((await rookery('cert', 'issue', '--help')).stdout).toContain('--format <format>');
  });

  it('answers unknown commands and options as InvalidRequest, exit 1, nothing on stdout', async () => {
    const unknown = await rookery('tenant', 'crate', 'acme');
    expect([unknown.code, unknown.stdout]).toEqual([1, '']);
    expect(unknown.stderr).toMatch(/^InvalidRequest: unknown command 'crate'/);
    expect(unknown.stderr).toContain('create');
    const option = await rookery('tenant', 'list', '--colour');
    expect([option.code, option.stderr]).toEqual([
      1,
      expect.stringMatching(/^InvalidRequest: unknown option '--colour'/),
    ]);
    const missing = await rookery('database', 'create', 'acme');
    expect(missing.stderr).toMatch(/^InvalidRequest: missing required argument 'name'/);
  });

  it('prints errors as JSON on stderr with --json', async () => {
    const run = await rookery('--json', 'tenant', 'show', 'nobody');
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr)).toEqual({
      error: { code: 'TenantNotFound', message: expect.any(String) },
    });
  });

  it('takes the data directory from ROOKERY_DATA and refuses a database URL that is not PostgreSQL', async () => {
    const viaEnv = makeTempDir('rookery-cli-env-');
    try {
      // --data given by the fixture wins over ROOKERY_DATA ...
      await spawnRookery(data.dir, ['tenant', 'create', 'acme'], { ROOKERY_DATA: viaEnv.dir });
      // ... and ROOKERY_DATA is used when there is no --data.
      const listed = await spawnRookery(null, ['--json', 'tenant', 'list'], { ROOKERY_DATA: data.dir });
      expect(listed.json<{ id: string }[]>().map((t) => t.id)).toEqual(['acme']);
      expect(
        (await spawnRookery(null, ['--json', 'tenant', 'list'], { ROOKERY_DATA: viaEnv.dir })).json(),
      ).toEqual([]);
    } finally {
      viaEnv.cleanup();
    }
    const badUrl = await rookery('--database-url', 'mysql://x', 'tenant', 'list');
    expect(badUrl.stderr).toMatch(/^InvalidRequest: --database-url: expected a postgres:\/\//);
  });
});
