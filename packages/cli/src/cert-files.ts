// Certificate files on disk. Each file is written to a temp name and renamed
// into place, so a reader (a curl started meanwhile, a second bootstrap) sees
// the old file or the new one, never half of one. Private keys and PKCS#12
// bundles are readable by their owner only.
import fs from 'node:fs';
import path from 'node:path';
import { RookeryError } from '@rookery/protocol';

export interface CertificateFiles {
  certFile?: string;
  keyFile?: string;
  pkcs12File?: string;
  caFile: string;
}

export interface CertificateContent {
  certPem?: string;
  keyPem?: string;
  pkcs12?: Buffer;
  caPem: string;
}

const PRIVATE = 0o600;
const PUBLIC = 0o644;

/** The files a format writes besides ca.crt: `<base>.crt` + `<base>.key`, or `<base>.p12`. */
export function certificateFileNames(base: string, format: 'pem' | 'pkcs12'): string[] {
  return format === 'pem' ? [`${base}.crt`, `${base}.key`] : [`${base}.p12`];
}

/**
 * Refuses to replace an existing certificate, key or bundle: overwriting a key
 * loses it for good. Called before anything is issued, so a refusal leaves no
 * recorded certificate whose key went nowhere.
 */
export function refuseToReplace(dir: string, names: readonly string[]): void {
  const existing = names.map((name) => path.join(dir, name)).filter((file) => fs.existsSync(file));
  if (existing.length > 0) {
    throw new RookeryError(
      'InvalidRequest',
      `${existing.join(', ')} already exists; choose another --out directory or pass --force to replace it.`,
    );
  }
}

/**
 * Writes `<base>.crt`, `<base>.key`, `<base>.p12` (whichever are given) and
 * `ca.crt` into `dir`; unless `overwrite`, only where none of them exists yet.
 */
export function writeCertificateFiles(
  dir: string,
  base: string,
  content: CertificateContent,
  options: { overwrite: boolean },
): CertificateFiles {
  const planned: { file: string; data: string | Buffer; mode: number; key: keyof CertificateFiles }[] = [];
  if (content.certPem)
    planned.push({ file: `${base}.crt`, data: content.certPem, mode: PUBLIC, key: 'certFile' });
  if (content.keyPem)
    planned.push({ file: `${base}.key`, data: content.keyPem, mode: PRIVATE, key: 'keyFile' });
  if (content.pkcs12)
    planned.push({ file: `${base}.p12`, data: content.pkcs12, mode: PRIVATE, key: 'pkcs12File' });
  if (!options.overwrite)
    refuseToReplace(
      dir,
      planned.map((p) => p.file),
    );
  fs.mkdirSync(dir, { recursive: true });
  // The CA certificate is public and the same for every file written here: always refreshed.
  planned.push({ file: 'ca.crt', data: content.caPem, mode: PUBLIC, key: 'caFile' });
  const written: Partial<CertificateFiles> = {};
  for (const { file, data, mode, key } of planned) {
    const target = path.join(dir, file);
    writeAtomically(target, data, mode);
    written[key] = target;
  }
  return written as CertificateFiles;
}

function writeAtomically(target: string, data: string | Buffer, mode: number): void {
  const temp = `${target}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temp, data, { mode });
    fs.chmodSync(temp, mode); // the umask may have taken bits off; a key must be exactly 0600
    fs.renameSync(temp, target);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
}

/** A file name from a principal's name: `Ada Lovelace` → `ada-lovelace`; the id if nothing is left. */
export function fileBaseFor(principal: { id: string; name: string }): string {
  const slug = principal.name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-.]+|-+$/g, '');
  return slug || principal.id;
}

/** The PKCS#12 password from --password or --password-file (its first line). */
export function readPassword(options: {
  password?: string | undefined;
  passwordFile?: string | undefined;
}): string {
  if (options.password !== undefined) return options.password;
  if (options.passwordFile !== undefined) {
    let text: string;
    try {
      text = fs.readFileSync(options.passwordFile, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // The README's first PKCS#12 is often the first time someone meets this flag: say how to make the file.
      throw new RookeryError(
        'InvalidRequest',
        code === 'ENOENT'
          ? `--password-file: ${options.passwordFile} does not exist; write the PKCS#12 password on its first ` +
              `line first, for example: node -p "crypto.randomBytes(18).toString('base64url')" > ${options.passwordFile}`
          : `--password-file: cannot read ${options.passwordFile} (${code ?? 'error'}).`,
      );
    }
    const password = text.split(/\r?\n/, 1)[0] ?? '';
    if (password.length > 0) return password;
    throw new RookeryError(
      'InvalidRequest',
      `--password-file: ${options.passwordFile} starts with an empty line.`,
    );
  }
  throw new RookeryError(
    'InvalidRequest',
    'A PKCS#12 file needs a password: pass --password-file <file> (or --password <text>, visible to other users in the process list).',
  );
}
