import path from 'node:path';
import { openControlStore, openTotpSecret } from '@rookery/control-store';
import { loadOrCreateMasterKey } from '@rookery/pki';
import { makeTempDir } from '@rookery/testkit';
import { generate, verify } from 'otplib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runRookery } from '../test-fixtures/run-cli.js';

let data: { dir: string; cleanup: () => void };
let personId: string;
let programId: string;
beforeEach(async () => {
  data = makeTempDir('rookery-cli-');
  personId = (
    await rookery('--json', 'tenant', 'create', 'acme', '--admin', 'ada', '--admin-kind', 'person')
  ).json<{
    admin: { id: string };
  }>().admin.id;
  programId = (
    await rookery(
      '--json',
      'principal',
      'create',
      '--tenant',
      'acme',
      '--kind',
      'program',
      '--name',
      'bot',
      '--role',
      'tenant-admin',
    )
  ).json<{ id: string }>().id;
});
afterEach(() => data.cleanup());
const rookery = (...args: string[]) => runRookery(data.dir, args);

describe('rookery totp', () => {
  it('enrols a person: the URI and QR code carry a secret the gateway can open and check', async () => {
    const enrolled = await rookery('totp', 'enrol', personId);
    expect(enrolled.code).toBe(0);
    const uri = /otpauth:\/\/totp\/\S+/.exec(enrolled.stdout)![0];
    const secret = new URL(uri).searchParams.get('secret')!;
    expect(decodeURIComponent(new URL(uri).pathname)).toBe('/Rookery:ada@acme');
    // The QR code is drawn with half blocks, at least 21 modules wide.
    const qrLines = enrolled.stdout.split('\n').filter((line) => /[█▀▄]/.test(line));
    expect(qrLines.length).toBeGreaterThanOrEqual(11);

    // What the gateway does when a code arrives: open the sealed secret for this principal, verify.
    const store = await openControlStore({ dataDir: data.dir });
    try {
      const masterKey = await loadOrCreateMasterKey(path.join(data.dir, 'control', 'master.key'));
      const opened = openTotpSecret(masterKey, (await store.getTotpSecret(personId))!, personId);
      expect(opened).toBe(secret);
      expect((await verify({ secret: opened, token: await generate({ secret }) })).valid).toBe(true);
    } finally {
      await store.close();
    }

    const again = await rookery('totp', 'enrol', personId);
    expect([again.code, again.stderr]).toEqual([
      1,
      expect.stringMatching(/^TwoFactorAlreadyEnrolled: .*totp reset/),
    ]);
    expect((await rookery('--json', 'totp', 'reset', personId)).json()).toEqual({
      principalId: personId,
      hadAuthenticator: true,
    });
    const renewed = await rookery('--json', 'totp', 'enrol', personId, '--no-qr');
    expect(renewed.json<{ secret: string }>().secret).not.toBe(secret);
  });

  it('refuses programs and unknown principals', async () => {
    const program = await rookery('totp', 'enrol', programId);
    expect([program.code, program.stderr]).toEqual([1, expect.stringMatching(/^InvalidRequest: .*program/)]);
    expect((await rookery('totp', 'reset', 'nobody')).stderr).toMatch(/^PrincipalNotFound: /);
  });
});
