// The gateway's own TLS certificates, issued by the embedded CA on first start (or dropped in by an
// operator) and kept as files (@rookery/pki, certificate-files.ts). The server certificate is re-read
// whenever its files change, so a rotation needs no restart: new handshakes get the new certificate while
// open connections keep the one they negotiated. In fleet routing the gateway also holds a client
// certificate naming it as the gateway service, which fleet hosts' relays require.
import fs from 'node:fs';
import path from 'node:path';
import {
  type CertificateAuthority,
  type CertificateFiles,
  ensureCertificatePair,
  issueServerCertificate,
  issueServiceCertificate,
  readCertificatePair,
  writeCertificatePair,
} from '@rookery/pki';
import type { ServerCertificate } from './gateway.js';

export const SERVER_CERT_FILE = 'server.crt';
export const SERVER_KEY_FILE = 'server.key';
/** Beside the server certificate: the one the gateway presents to fleet hosts. */
export const RELAY_CLIENT_CERT_FILE = 'relay-client.crt';
export const RELAY_CLIENT_KEY_FILE = 'relay-client.key';

const serverFiles = (directory: string): CertificateFiles => ({
  directory,
  certFile: SERVER_CERT_FILE,
  keyFile: SERVER_KEY_FILE,
});

export function readServerCertificate(directory: string): ServerCertificate | null {
  return readCertificatePair(serverFiles(directory));
}

/** Writes key then certificate, each atomically: a watcher never sees a certificate without its key. */
export function writeServerCertificate(directory: string, certificate: ServerCertificate): void {
  writeCertificatePair(serverFiles(directory), certificate);
}

/** The certificate in `directory`, issued (for `hosts`) if missing or about to expire. */
export function ensureServerCertificate(
  ca: CertificateAuthority,
  directory: string,
  hosts: string[],
): Promise<ServerCertificate> {
  return ensureCertificatePair(serverFiles(directory), () =>
    issueServerCertificate(ca, { hosts, validDays: 397 }),
  );
}

/** The gateway's client certificate for fleet hosts' relays, in `directory`, issued if missing or about to expire. */
export function ensureRelayClientCertificate(
  ca: CertificateAuthority,
  directory: string,
): Promise<ServerCertificate> {
  return ensureCertificatePair(
    { directory, certFile: RELAY_CLIENT_CERT_FILE, keyFile: RELAY_CLIENT_KEY_FILE },
    () => issueServiceCertificate(ca, { service: 'gateway', validDays: 397 }),
  );
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
