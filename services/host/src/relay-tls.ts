// The relay port's TLS material (fleet mode): Rookery's CA, read from ROOKERY_CA_DIR (never created here:
// a CA of the host's own making would be trusted by no gateway), and the host's relay certificate, issued
// from it on first start and again before it expires, kept in <dataDir>/relay/.
import fs from 'node:fs';
import path from 'node:path';
import { controlPaths } from '@rookery/control-store';
import {
  CA_CERT_FILE,
  CA_KEY_FILE,
  CertificateAuthority,
  ensureCertificatePair,
  issueServiceCertificate,
} from '@rookery/pki';
import type { HostConfig } from './config.js';
import type { RelayTls } from './relay-server.js';

export const RELAY_CERT_FILE = 'relay.crt';
export const RELAY_KEY_FILE = 'relay.key';

export async function loadRelayTls(
  config: Pick<HostConfig, 'dataDir' | 'caDir' | 'host' | 'relayHost' | 'relayNames'>,
): Promise<RelayTls> {
  const caDir = config.caDir ?? controlPaths(config.dataDir).certificateAuthority;
  let material: { certPem: string; keyPem: string };
  try {
    material = {
      certPem: fs.readFileSync(path.join(caDir, CA_CERT_FILE), 'utf8'),
      keyPem: fs.readFileSync(path.join(caDir, CA_KEY_FILE), 'utf8'),
    };
  } catch (error) {
    throw new Error(
      `Fleet mode needs Rookery's CA to issue the relay's certificate, and ${caDir} has no ${CA_CERT_FILE} and ${CA_KEY_FILE} (${(error as Error).message}); set ROOKERY_CA_DIR to the control plane's CA directory`,
    );
  }
  const ca = await CertificateAuthority.fromPem(material);
  const relayHost = config.relayHost ?? config.host;
  const hosts = [...new Set([relayHost, ...config.relayNames])];
  const pair = await ensureCertificatePair(
    { directory: path.join(config.dataDir, 'relay'), certFile: RELAY_CERT_FILE, keyFile: RELAY_KEY_FILE },
    () => issueServiceCertificate(ca, { service: 'host', hosts, validDays: 397 }),
  );
  return { ...pair, caPem: ca.certPem };
}
