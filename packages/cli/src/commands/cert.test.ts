import { execFileSync } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { identityOf } from '@rookery/pki';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runRookery } from '../test-fixtures/run-cli.js';

let data: { dir: string; cleanup: () => void };
let principalId: string;
let out: string;
beforeEach(async () => {
  data = makeTempDir('rookery-cli-');
  out = path.join(data.dir, 'out');
  const created = await rookery(
    '--json',
    'tenant',
    'create',
    'acme',
    '--admin',
    'Ada Lovelace',
    '--admin-kind',
    'person',
  );
  principalId = created.json<{ admin: { id: string } }>().admin.id;
});
afterEach(() => data.cleanup());
const rookery = (...args: string[]) => runRookery(data.dir, args);

interface Issued {
  serial: string;
  thumbprint: string;
  files: { certFile: string; keyFile?: string; pkcs12File?: string; caFile: string };
}

describe('rookery cert', () => {
  it('issues PEM files the CA vouches for, with the key readable by its owner only', async () => {
    const issued = await rookery('--json', 'cert', 'issue', principalId, '--out', out, '--days', '30');
    expect(issued.code).toBe(0);
    const { serial, files } = issued.json<Issued>();
    expect(files).toEqual({
      certFile: path.join(out, 'ada-lovelace.crt'),
      keyFile: path.join(out, 'ada-lovelace.key'),
      caFile: path.join(out, 'ca.crt'),
    });
    expect(fs.statSync(files.keyFile!).mode & 0o777).toBe(0o600);
    const certPem = fs.readFileSync(files.certFile, 'utf8');
    expect(identityOf(certPem)).toMatchObject({ principalId, tenantId: 'acme', kind: 'person', serial });
    // The CA in ca.crt is the data directory's CA, the one the gateway trusts.
    const ca = fs.readFileSync(path.join(data.dir, 'control', 'ca', 'ca.crt'), 'utf8');
    expect(fs.readFileSync(files.caFile, 'utf8')).toBe(ca);
    expect(new X509Certificate(certPem).verify(new X509Certificate(ca).publicKey)).toBe(true);
    execFileSync('openssl', ['verify', '-CAfile', files.caFile, files.certFile]);

    const listed = await rookery('cert', 'list', principalId);
    expect(listed.stdout).toMatch(new RegExp(`^${serial}\\s+valid\\s`, 'm'));

    const again = await rookery('cert', 'issue', principalId, '--out', out);
    expect([again.code, again.stderr]).toEqual([
      1,
      expect.stringMatching(/^InvalidRequest: .*already exists.*--force/),
    ]);
    expect((await rookery('cert', 'issue', principalId, '--out', out, '--force')).code).toBe(0);
    expect((await rookery('--json', 'cert', 'list', principalId)).json<unknown[]>()).toHaveLength(2);
  });

  it('issues an RSA key as PKCS#1 with --key-type, for the official RavenDB client', async () => {
    const issued = await rookery(
      '--json',
      'cert',
      'issue',
      principalId,
      '--out',
      out,
      '--key-type',
      'rsa-2048',
    );
    expect(issued.code, issued.stderr).toBe(0);
    const { files } = issued.json<Issued>();
    const keyPem = fs.readFileSync(files.keyFile!, 'utf8');
    // The block the RavenDB client's type 'pem' reads; it drops any other key without a word.
    expect(keyPem).toMatch(/^-----BEGIN RSA PRIVATE KEY-----\n/);
    expect(fs.statSync(files.keyFile!).mode & 0o777).toBe(0o600);
    const key = createPrivateKey(keyPem);
    expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(new X509Certificate(fs.readFileSync(files.certFile, 'utf8')).checkPrivateKey(key)).toBe(true);
    execFileSync('openssl', ['verify', '-CAfile', files.caFile, files.certFile]);
    // A PKCS#12 of the same certificate from its PKCS#1 key.
    const pwFile = path.join(data.dir, 'pw.txt');
    fs.writeFileSync(pwFile, 'secret\n');
    const serial = issued.json<Issued>().serial;
    const p12Dir = path.join(data.dir, 'p12');
    const downloaded = await rookery(
      ...['cert', 'download', serial, '--format', 'pkcs12', '--key', files.keyFile!],
      ...['--password-file', pwFile, '--out', p12Dir],
    );
    expect(downloaded.code, downloaded.stderr).toBe(0);
    execFileSync('openssl', [
      ...['pkcs12', '-in', path.join(p12Dir, 'ada-lovelace.p12'), '-passin', 'pass:secret'],
      ...['-nodes', '-out', path.join(data.dir, 'p12.pem')],
    ]);

    const refused = await rookery(
      'cert',
      'issue',
      principalId,
      '--out',
      path.join(data.dir, 'no'),
      '--key-type',
      'rsa-1024',
    );
    expect([refused.code, refused.stderr]).toEqual([
      1,
      expect.stringMatching(/^InvalidRequest: --key-type: .*ecdsa-p256, rsa-2048, rsa-3072/),
    ]);
    expect(fs.existsSync(path.join(data.dir, 'no'))).toBe(false);
    expect((await rookery('--json', 'cert', 'list', principalId)).json<unknown[]>()).toHaveLength(1);
  });

  it('says how to make a --password-file that does not exist, and issues nothing', async () => {
    const missing = path.join(data.dir, 'pw.txt');
    const refused = await rookery(
      'cert',
      'issue',
      principalId,
      '--format',
      'pkcs12',
      '--password-file',
      missing,
      '--out',
      out,
    );
    expect([refused.code, refused.stderr.trim()]).toEqual([
      1,
      `InvalidRequest: --password-file: ${missing} does not exist; write the PKCS#12 password on its first ` +
        `line first, for example: node -p "crypto.randomBytes(18).toString('base64url')" > ${missing}`,
    ]);
    expect((await rookery('--json', 'cert', 'list', principalId)).json<unknown[]>()).toEqual([]);
  });

  it('revokes by serial, once, and says so', async () => {
    const { serial } = (await rookery('--json', 'cert', 'issue', principalId, '--out', out)).json<Issued>();
    const revoked = await rookery('cert', 'revoke', serial.toUpperCase());
    expect(revoked.stdout).toContain(`Revoked ${serial}.`);
    expect((await rookery('cert', 'revoke', serial)).stdout).toContain('was already revoked');
    expect((await rookery('cert', 'list', principalId)).stdout).toMatch(
      new RegExp(`^${serial}\\s+revoked\\s`, 'm'),
    );
    const unknown = await rookery('cert', 'revoke', 'abcdef');
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringMatching(/^CertificateNotFound: /)]);
  });

  it('writes PKCS#12 at issue, and at download only with the matching key', async () => {
    const passwordFile = path.join(data.dir, 'password');
    fs.writeFileSync(passwordFile, 'open sesame\n');
    const p12 = await rookery(
      '--json',
      'cert',
      'issue',
      principalId,
      '--format',
      'pkcs12',
      '--password-file',
      passwordFile,
      '--out',
      out,
    );
    expect(p12.code).toBe(0);
    const { files } = p12.json<Issued>();
    expect(fs.statSync(files.pkcs12File!).mode & 0o777).toBe(0o600);
    const opened = execFileSync(
      'openssl',
      ['pkcs12', '-in', files.pkcs12File!, '-nodes', '-passin', 'pass:open sesame'],
      {
        encoding: 'utf8',
      },
    );
    expect(opened).toContain('BEGIN PRIVATE KEY');
    const noPassword = await rookery(
      'cert',
      'issue',
      principalId,
      '--format',
      'pkcs12',
      '--out',
      out,
      '--force',
    );
    expect(noPassword.stderr).toMatch(/^InvalidRequest: A PKCS#12 file needs a password/);

    const pem = (
      await rookery('--json', 'cert', 'issue', principalId, '--out', path.join(data.dir, 'pem'))
    ).json<Issued>();
    const elsewhere = path.join(data.dir, 'download');
    const downloaded = await rookery('--json', 'cert', 'download', pem.serial, '--out', elsewhere);
    expect(fs.readFileSync(downloaded.json<Issued>().files.certFile, 'utf8')).toBe(
      fs.readFileSync(pem.files.certFile, 'utf8'),
    );
    expect(downloaded.json<Issued>().files.keyFile).toBeUndefined();

    const withoutKey = await rookery(
      'cert',
      'download',
      pem.serial,
      '--format',
      'pkcs12',
      '--password',
      'pw',
      '--out',
      elsewhere,
    );
    expect(withoutKey.stderr).toMatch(/^InvalidRequest: --key: .*never keeps/);
    const wrongKey = await rookery(
      'cert',
      'download',
      pem.serial,
      '--format',
      'pkcs12',
      '--password',
      'pw',
      '--key',
      passwordFile,
      '--out',
      elsewhere,
    );
    expect(wrongKey.stderr).toMatch(/^InvalidRequest: --key: .* is not the private key of this certificate/);
    const bundled = await rookery(
      '--json',
      'cert',
      'download',
      pem.serial,
      '--format',
      'pkcs12',
      '--password',
      'pw',
      '--key',
      pem.files.keyFile!,
      '--out',
      elsewhere,
    );
    expect(bundled.code).toBe(0);
    const text = execFileSync(
      'openssl',
      ['pkcs12', '-in', bundled.json<Issued>().files.pkcs12File!, '-nodes', '-passin', 'pass:pw'],
      {
        encoding: 'utf8',
      },
    );
    expect(text).toContain(fs.readFileSync(pem.files.certFile, 'utf8').split('\n')[1]);
  });

  it('refuses unknown principals and bad values', async () => {
    expect((await rookery('cert', 'issue', 'nobody', '--out', out)).stderr).toMatch(/^PrincipalNotFound: /);
    expect((await rookery('cert', 'issue', principalId, '--days', 'ten', '--out', out)).stderr).toMatch(
      /^InvalidRequest: --days: expected a whole number/,
    );
    expect((await rookery('cert', 'issue', principalId, '--format', 'der', '--out', out)).stderr).toMatch(
      /^InvalidRequest: --format: /,
    );
    expect(fs.existsSync(out)).toBe(false);
  });
});
