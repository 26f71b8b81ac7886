// rookery cert issue|list|revoke|download — client certificates of principals.
// The private key exists only in what `issue` writes: the control plane keeps
// the certificate, never the key, so `download` gives the certificate back and
// builds a PKCS#12 only from a key the person still holds.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import {
  bundlePkcs12,
  CertificateKeyTypeSchema,
  DEFAULT_CERTIFICATE_DAYS,
  issuePrincipalCertificate,
  requireCertificate,
  requirePrincipal,
  revokePrincipalCertificate,
} from '@rookery/control-store';
import { RookeryError } from '@rookery/protocol';
import type { Command } from 'commander';
import { z } from 'zod';
import { action } from '../action.js';
import {
  certificateFileNames,
  fileBaseFor,
  readPassword,
  refuseToReplace,
  writeCertificateFiles,
} from '../cert-files.js';
import { CountArg, PasswordOptions, parseCommandInput } from '../inputs.js';
import { type CliIo, formatTable, isoTime } from '../output.js';

const FileOptions = {
  format: z.enum(['pem', 'pkcs12']),
  out: z.string().min(1),
  force: z.boolean().optional(),
  ...PasswordOptions,
};
const IssueInput = z.object({
  args: z.tuple([z.string().min(1)]),
  options: z.object({ ...FileOptions, days: CountArg.optional(), keyType: CertificateKeyTypeSchema }),
});
const DownloadInput = z.object({
  args: z.tuple([z.string().min(1)]),
  options: z.object({ ...FileOptions, key: z.string().min(1).optional() }),
});
const OneArg = z.object({ args: z.tuple([z.string().min(1)]), options: z.object({}) });

function describeFiles(files: Record<string, string | undefined>): string {
  return Object.values(files)
    .filter((file): file is string => file !== undefined)
    .map((file) => `  ${file}`)
    .join('\n');
}

function withFileOptions(command: Command): Command {
  return command
    .option('--format <format>', 'pem (certificate + key files) or pkcs12 (one .p12 file)', 'pem')
    .option('--out <dir>', 'directory to write into', '.')
    .option('--force', 'replace existing files')
    .option('--password-file <file>', 'PKCS#12 password: the first line of this file')
    .option('--password <text>', 'PKCS#12 password (visible in the process list; prefer --password-file)');
}

export function registerCertCommands(program: Command, io: CliIo): void {
  const cert = program.command('cert').description('client certificates: issue, list, revoke, download');

  withFileOptions(
    cert
      .command('issue')
      .description('issue a certificate for a principal and write it (with its key) to --out')
      .argument('<principal>', 'the id shown by principal list')
      .option('--days <n>', `validity in days (default ${DEFAULT_CERTIFICATE_DAYS})`)
      .option(
        '--key-type <type>',
        "ecdsa-p256, or rsa-2048 / rsa-3072 (key written as PKCS#1 RSA PRIVATE KEY: the official RavenDB client's type 'pem' reads only that)",
        'ecdsa-p256',
      ),
  ).action(
    action(io, async (context, input) => {
      const { args, options } = parseCommandInput(IssueInput, input, ['principal']);
      const pkcs12Password = options.format === 'pkcs12' ? readPassword(options) : undefined;
      const store = await context.store();
      const base = fileBaseFor(await requirePrincipal(store, args[0]));
      if (!options.force) refuseToReplace(options.out, certificateFileNames(base, options.format));
      const issued = await issuePrincipalCertificate(store, await context.ca(), {
        principalId: args[0],
        keyType: options.keyType,
        ...(options.days === undefined ? {} : { validDays: options.days }),
        ...(pkcs12Password === undefined ? {} : { pkcs12Password }),
      });
      const files = writeCertificateFiles(
        options.out,
        base,
        issued.pkcs12
          ? { pkcs12: issued.pkcs12, caPem: issued.caPem }
          : { certPem: issued.certPem, keyPem: issued.keyPem, caPem: issued.caPem },
        // Checked above; a file appearing meanwhile is replaced rather than losing the new key.
        { overwrite: true },
      );
      const { pem: _pem, ...record } = issued.record;
      await context.print({ ...record, files }, () =>
        [
          `Issued certificate ${record.serial} for "${issued.principal.name}", valid until ${isoTime(record.notAfter)}:`,
          describeFiles({ ...files }),
          'The private key is not kept anywhere else: keep these files safe.',
        ].join('\n'),
      );
    }),
  );

  cert
    .command('list')
    .description("list a principal's certificates")
    .argument('<principal>')
    .action(
      action(io, async (context, input) => {
        const [principalId] = parseCommandInput(OneArg, input, ['principal']).args;
        const store = await context.store();
        await requirePrincipal(store, principalId);
        const records = (await store.listCertificates(principalId)).map(({ pem: _pem, ...record }) => record);
        const now = Date.now();
        const state = (r: (typeof records)[number]) =>
          r.revokedAt !== null ? 'revoked' : r.notAfter < now ? 'expired' : 'valid';
        await context.print(
          records.map((r) => ({ ...r, state: state(r) })),
          () =>
            records.length === 0
              ? 'No certificates.'
              : formatTable(
                  ['SERIAL', 'STATE', 'NOT BEFORE', 'NOT AFTER', 'REVOKED'],
                  records.map((r) => [
                    r.serial,
                    state(r),
                    isoTime(r.notBefore),
                    isoTime(r.notAfter),
                    isoTime(r.revokedAt),
                  ]),
                ),
        );
      }),
    );

  cert
    .command('revoke')
    .description('revoke a certificate; gateways refuse it within about a second')
    .argument('<serial>', 'as shown by cert list')
    .action(
      action(io, async (context, input) => {
        const [serial] = parseCommandInput(OneArg, input, ['serial']).args;
        const { certificate, revokedNow } = await revokePrincipalCertificate(await context.store(), serial);
        const { pem: _pem, ...record } = certificate;
        await context.print({ ...record, revokedNow }, () =>
          revokedNow
            ? `Revoked ${record.serial}.`
            : `${record.serial} was already revoked at ${isoTime(record.revokedAt)}.`,
        );
      }),
    );

  withFileOptions(
    cert
      .command('download')
      .description('write a certificate (and the CA) again; PKCS#12 needs the key it was issued with')
      .argument('<serial>', 'as shown by cert list')
      .option('--key <file>', 'the private key written by cert issue (for --format pkcs12)'),
  ).action(
    action(io, async (context, input) => {
      const { args, options } = parseCommandInput(DownloadInput, input, ['serial']);
      const store = await context.store();
      const record = await requireCertificate(store, args[0]);
      const principal = await requirePrincipal(store, record.principalId);
      const ca = await context.ca();
      let content: Parameters<typeof writeCertificateFiles>[2] = { certPem: record.pem, caPem: ca.certPem };
      if (options.format === 'pkcs12') {
        if (options.key === undefined) {
          throw new RookeryError(
            'InvalidRequest',
            '--key: a PKCS#12 file holds the private key, which Rookery never keeps; pass the .key file written by cert issue, or issue a new certificate.',
          );
        }
        const keyPem = readMatchingKey(options.key, record.pem);
        const pkcs12 = await bundlePkcs12(
          principal,
          { certPem: record.pem, keyPem },
          ca.certPem,
          readPassword(options),
        );
        content = { pkcs12, caPem: ca.certPem };
      }
      const files = writeCertificateFiles(options.out, fileBaseFor(principal), content, {
        overwrite: options.force === true,
      });
      await context.print({ serial: record.serial, files }, () =>
        [`Wrote certificate ${record.serial} of "${principal.name}":`, describeFiles({ ...files })].join(
          '\n',
        ),
      );
    }),
  );
}

/** The PEM key in `file`, checked against the certificate: a wrong key would make a PKCS#12 nobody can use. */
function readMatchingKey(file: string, certPem: string): string {
  let keyPem: string;
  try {
    keyPem = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new RookeryError(
      'InvalidRequest',
      `--key: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`,
    );
  }
  let matches = false;
  try {
    matches = new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    // not a key at all: reported below like a wrong one
  }
  if (!matches)
    throw new RookeryError('InvalidRequest', `--key: ${file} is not the private key of this certificate.`);
  return keyPem;
}
