// Which Rookery service a peer's certificate stands for (issue.ts, issueServiceCertificate), read by a
// fleet host on every relay connection from a gateway. TLS has already checked the chain against the CA;
// this only reads the name, so a principal's certificate from the same CA is told apart from a service's.
import { X509Certificate } from 'node:crypto';
import { uriNames } from './identity.js';
import { EKU_CLIENT_AUTH, type ServiceKind, serviceFromUris } from './identity-encoding.js';

/** The service a client certificate (DER or PEM) names, or null: not readable, not clientAuth, or a principal's. */
export function serviceOf(cert: Buffer | string): ServiceKind | null {
  let parsed: X509Certificate;
  try {
    parsed = new X509Certificate(cert);
  } catch {
    return null;
  }
  if (!parsed.keyUsage?.includes(EKU_CLIENT_AUTH)) return null;
  try {
    return serviceFromUris(uriNames(parsed.subjectAltName));
  } catch {
    return null;
  }
}
