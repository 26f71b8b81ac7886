// A service's own certificate and key kept as two files in a directory: issued from the CA on first start
// (or dropped in by an operator), re-issued when it is about to expire. The gateway keeps its server and
// client certificates this way, a fleet host its relay certificate.
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface CertificatePair {
  certPem: string;
  keyPem: string;
}

/** Where a pair lives: `directory/certFile` and `directory/keyFile`. */
export interface CertificateFiles {
  directory: string;
  certFile: string;
  keyFile: string;
}

/** A certificate this close to its end is issued again at the next start. */
export const RENEW_BEFORE_MS = 30 * 24 * 60 * 60_000;

export function readCertificatePair(files: CertificateFiles): CertificatePair | null {
  try {
    return {
      certPem: fs.readFileSync(path.join(files.directory, files.certFile), 'utf8'),
      keyPem: fs.readFileSync(path.join(files.directory, files.keyFile), 'utf8'),
    };
  } catch {
    return null;
  }
}

/** Writes key then certificate, each atomically: a watcher never sees a certificate without its key. */
export function writeCertificatePair(files: CertificateFiles, pair: CertificatePair): void {
  fs.mkdirSync(files.directory, { recursive: true });
  const write = (file: string, text: string, mode: number) => {
    const target = path.join(files.directory, file);
    fs.writeFileSync(`${target}.tmp`, text, { mode });
    fs.renameSync(`${target}.tmp`, target);
  };
  write(files.keyFile, pair.keyPem, 0o600);
  write(files.certFile, pair.certPem, 0o644);
}

/** The pair in `files`, made with `issue` (and written there) when missing or within RENEW_BEFORE_MS of its end. */
export async function ensureCertificatePair(
  files: CertificateFiles,
  issue: () => Promise<CertificatePair>,
): Promise<CertificatePair> {
  const existing = readCertificatePair(files);
  if (existing && Date.parse(new X509Certificate(existing.certPem).validTo) - Date.now() > RENEW_BEFORE_MS) {
    return existing;
  }
  const issued = await issue();
  const pair = { certPem: issued.certPem, keyPem: issued.keyPem };
  writeCertificatePair(files, pair);
  return pair;
}
