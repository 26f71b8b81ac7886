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
  issueServerCertificate,
  issueServiceCertificate,
} from '@rookery/pki';
import { type RelayTenantTls, relayServerName } from '@rookery/protocol';
import type { HostConfig } from './config.js';
import type { RelayTls } from './relay-server.js';

export const RELAY_CERT_FILE = 'relay.crt';
export const RELAY_KEY_FILE = 'relay.key';

export async function loadRelayTls(
  config: Pick<HostConfig, 'dataDir' | 'caDir' | 'host' | 'relayHost' | 'relayNames' | 'relayMode'>,
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
  return {
    ...pair,
    caPem: ca.certPem,
    ...(config.relayMode === 'handoff' && { tenantCertificates: new TenantCertificates(ca) }),
  };
}

/** A tenant certificate's life (the shortest a certificate of Rookery's CA can have), and when it is renewed. */
export const TENANT_CERTIFICATE_DAYS = 1;
const RENEW_AFTER_MS = (TENANT_CERTIFICATE_DAYS * 86_400_000) / 2;

/**
 * The certificates tenants' processes end handed-off relay connections with (relay-handoff.ts): one per
 * tenant, naming its relay server name only — no service identity, so a tenant's key cannot pass for a
 * host, nor for another tenant — valid a day and renewed after half of it, kept in memory only (a host
 * restart issues new ones). Why not the relay's own key in every tenant: a tenant process runs its users'
 * code; what it could leak should be worth one tenant's name for a day, not the host's identity.
 */
export class TenantCertificates {
  private readonly issued = new Map<string, Promise<RelayTenantTls & { renewAt: number }>>();

  constructor(
    private readonly ca: CertificateAuthority,
    private readonly now: () => number = Date.now,
  ) {}

  async for(tenantId: string): Promise<RelayTenantTls> {
    let entry = this.issued.get(tenantId);
    if (entry) {
      const current = await entry.catch(() => null);
      if (current === null || current.renewAt <= this.now()) entry = undefined;
    }
    if (!entry) {
      const renewAt = this.now() + RENEW_AFTER_MS;
      entry = issueServerCertificate(this.ca, {
        hosts: [relayServerName(tenantId)],
        validDays: TENANT_CERTIFICATE_DAYS,
      }).then(({ certPem, keyPem, serial }) => ({
        certPem,
        keyPem,
        serial,
        caPem: this.ca.certPem,
        renewAt,
      }));
      this.issued.set(tenantId, entry);
    }
    const { renewAt: _, ...tls } = await entry;
    return tls;
  }
}
