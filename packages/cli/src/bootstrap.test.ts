import fs from 'node:fs';
import path from 'node:path';
import { identityOf } from '@rookery/pki';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BootstrapResult } from './bootstrap.js';
import { spawnRookery } from './test-fixtures/run-cli.js';

let data: { dir: string; cleanup: () => void };
beforeEach(() => {
  data = makeTempDir('rookery-cli-');
});
afterEach(() => data.cleanup());
const rookery = (...args: string[]) => spawnRookery(data.dir, args);

describe('rookery bootstrap', () => {
  it('makes the CA, the master key, the tenant, its admin and the certificate files', async () => {
    const run = await rookery('--json', 'bootstrap', '--tenant', 'first');
    expect(run.code).toBe(0);
    const result = run.json<BootstrapResult>();
    const certs = path.join(data.dir, 'certs');
    expect(result).toMatchObject({
      tenantId: 'first',
      certDir: certs,
      certFile: path.join(certs, 'admin.crt'),
      keyFile: path.join(certs, 'admin.key'),
      caFile: path.join(certs, 'ca.crt'),
      created: { tenant: true, principal: true, certificate: true },
    });
    for (const file of [
      'control/ca/ca.crt',
      'control/ca/ca.key',
      'control/master.key',
      'control/control.db',
    ]) {
      expect(fs.existsSync(path.join(data.dir, file))).toBe(true);
    }
    expect(fs.statSync(result.keyFile).mode & 0o777).toBe(0o600);
    expect(identityOf(fs.readFileSync(result.certFile))).toMatchObject({
      principalId: result.principalId,
      tenantId: 'first',
      kind: 'program',
      serial: result.serial,
    });
    const principals = await rookery('--json', 'principal', 'list', '--tenant', 'first');
    expect(principals.json()).toEqual([
      expect.objectContaining({ name: 'admin', role: { kind: 'tenant-admin' } }),
    ]);
  });

  it('is idempotent, and replaces a certificate whose key is gone (revoking the old one)', async () => {
    const first = (await rookery('--json', 'bootstrap')).json<BootstrapResult>();
    expect(first.tenantId).toBe('demo');
    const certBefore = fs.readFileSync(first.certFile, 'utf8');
    const second = (await rookery('--json', 'bootstrap')).json<BootstrapResult>();
    expect(second).toEqual({ ...first, created: { tenant: false, principal: false, certificate: false } });
    expect(fs.readFileSync(first.certFile, 'utf8')).toBe(certBefore);

    fs.rmSync(first.keyFile);
    const third = (await rookery('--json', 'bootstrap')).json<BootstrapResult>();
    expect(third).toMatchObject({ principalId: first.principalId, created: { certificate: true } });
    expect(third.serial).not.toBe(first.serial);
    const states = (await rookery('--json', 'cert', 'list', first.principalId)).json<
      { serial: string; state: string }[]
    >();
    expect(states).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ serial: first.serial, state: 'revoked' }),
        expect.objectContaining({ serial: third.serial, state: 'valid' }),
      ]),
    );
  });

  it('does not make a deleted first tenant again while the purge of its data is pending', async () => {
    expect((await rookery('bootstrap', '--tenant', 'first')).code).toBe(0);
    expect((await rookery('tenant', 'delete', 'first', '--yes')).code).toBe(0);
    // No worker runs here: the purge stays queued, and the id stays taken.
    const again = await rookery('bootstrap', '--tenant', 'first');
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/^TenantPurgePending: Tenant "first" was deleted and the purge of its data/);
  });

  it('prints the curl line for people', async () => {
    const run = await rookery('bootstrap');
    expect(run.stdout).toContain('(new)');
    expect(run.stdout).toMatch(
      /curl --cacert \S+ca\.crt --cert \S+admin\.crt --key \S+admin\.key https:\/\/localhost:8443/,
    );
  });
});
