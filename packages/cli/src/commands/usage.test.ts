import { openControlStore } from '@rookery/control-store';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runRookery } from '../test-fixtures/run-cli.js';

let data: { dir: string; cleanup: () => void };
beforeEach(() => {
  data = makeTempDir('rookery-cli-');
});
afterEach(() => data.cleanup());
const rookery = (...args: string[]) => runRookery(data.dir, args);

const minute = (iso: string) => Date.parse(iso);

describe('rookery usage', () => {
  it('prints the minutes in the window with totals, as a table or JSON', async () => {
    await rookery('tenant', 'create', 'acme');
    const store = await openControlStore({ dataDir: data.dir });
    const row = (at: string, requests: number) => ({
      tenantId: 'acme',
      minute: minute(at),
      requests,
      bytesIn: requests * 100,
      bytesOut: requests * 1000,
      workUnits: requests * 2,
    });
    await store.addUsage([
      row('2025-03-01T10:00:00Z', 3),
      row('2025-03-01T10:01:00Z', 4),
      row('2025-03-02T00:00:00Z', 9),
    ]);
    await store.close();

    const window = ['--from', '2025-03-01T00:00:00Z', '--to', '2025-03-01T23:59:00Z'];
    const table = await rookery('usage', 'acme', ...window);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^MINUTE\s+REQUESTS\s+BYTES IN\s+BYTES OUT\s+WORK UNITS$/m);
    expect(table.stdout).toMatch(/^2025-03-01T10:00:00.000Z\s+3\s+300\s+3000\s+6$/m);
    expect(table.stdout).toMatch(/^total\s+7\s+700\s+7000\s+14$/m);
    expect(table.stdout).not.toContain('2025-03-02');

    const json = await rookery(
      '--json',
      'usage',
      'acme',
      '--from',
      String(minute('2025-03-01T10:01:00Z')),
      '--to',
      '2025-03-02',
    );
    expect(json.json()).toMatchObject({
      minutes: [{ requests: 4 }, { requests: 9 }],
      total: { requests: 13 },
    });
  });

  it('refuses a window it cannot read and an unknown tenant', async () => {
    await rookery('tenant', 'create', 'acme');
    expect((await rookery('usage', 'acme', '--from', 'yesterday')).stderr).toMatch(
      /^InvalidRequest: --from: expected an ISO/,
    );
    expect((await rookery('usage', 'acme', '--from', '2025-02-01', '--to', '2025-01-01')).stderr).toMatch(
      /^InvalidRequest: --from: must not be after --to/,
    );
    expect((await rookery('usage', 'nobody')).stderr).toMatch(/^TenantNotFound: /);
  });
});
