// The gateway's own TLS certificate: issued by the embedded CA on first start
// (or dropped in by an operator), and re-read whenever its files change, so
// a rotation needs no restart: new handshakes get the new certificate while
// open connections keep the one they negotiated.
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type CertificateAuthority, issueServerCertificate } from '@rookery/pki';
import type { ServerCertificate } from './gateway.js';

export const SERVER_CERT_FILE = 'server.crt';
export const SERVER_KEY_FILE = 'server.key';
const RENEW_BEFORE_MS = 30 * 24 * 60 * 60_000;

export function readServerCertificate(directory: string): ServerCertificate | null {
  try {
    return {
      certPem: fs.readFileSync(path.join(directory, SERVER_CERT_FILE), 'utf8'),
      keyPem: fs.readFileSync(path.join(directory, SERVER_KEY_FILE), 'utf8'),
    };
  } catch {
    return null;
  }
}

/** Writes key then certificate, each atomically: a watcher never sees a certificate without its key. */
export function writeServerCertificate(directory: string, certificate: ServerCertificate): void {
  fs.mkdirSync(directory, { recursive: true });
  const write = (file: string, text: string, mode: number) => {
    const target = path.join(directory, file);
    fs.writeFileSync(`${target}.tmp`, text, { mode });
    fs.renameSync(`${target}.tmp`, target);
  };
  write(SERVER_KEY_FILE, certificate.keyPem, 0o600);
  write(SERVER_CERT_FILE, certificate.certPem, 0o644);
}

/** The certificate in `directory`, issued (for `hosts`) if missing or about to expire. */
export async function ensureServerCertificate(
  ca: CertificateAuthority,
  directory: string,
  hosts: string[],
): Promise<ServerCertificate> {
  const existing = readServerCertificate(directory);
  if (existing && Date.parse(new X509Certificate(existing.certPem).validTo) - Date.now() > RENEW_BEFORE_MS) {
    return existing;
  }
  const issued = await issueServerCertificate(ca, { hosts, validDays: 397 });
  const certificate = { certPem: issued.certPem, keyPem: issued.keyPem };
  writeServerCertificate(directory, certificate);
  return certificate;
}

/** Calls `onChange` with the new pair whenever the certificate file changes (polled once a second). */
export function watchServerCertificate(
  directory: string,
  onChange: (certificate: ServerCertificate) => void,
): () => void {
  const file = path.join(directory, SERVER_CERT_FILE);
  const listener = (current: fs.Stats, previous: fs.Stats) => {
    if (current.mtimeMs === previous.mtimeMs) return;
    const certificate = readServerCertificate(directory);
    if (certificate) onChange(certificate);
  };
  fs.watchFile(file, { interval: 1_000 }, listener);
  return () => fs.unwatchFile(file, listener);
}
