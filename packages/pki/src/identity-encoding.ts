// How a Rookery identity is written into a client certificate, in one place so the issuer
// and the reader cannot drift apart. The identity travels as URI subject alternative names:
//   urn:rookery:principal:<principalId>
//   urn:rookery:tenant:<tenantId>   or   urn:rookery:operator   (tenantId null)
//   urn:rookery:kind:<program|person>
// Ids are percent-encoded (encodeURIComponent), so any id is a valid URI and reads back exactly.
// Rookery's own services (a gateway reaching a fleet host) carry one name instead, never a principal:
//   urn:rookery:service:<gateway|host|worker>
export type PrincipalKind = 'program' | 'person';

export const URN_PRINCIPAL = 'urn:rookery:principal:';
export const URN_TENANT = 'urn:rookery:tenant:';
export const URN_OPERATOR = 'urn:rookery:operator';
export const URN_KIND = 'urn:rookery:kind:';
export const PRINCIPAL_KINDS: readonly PrincipalKind[] = ['program', 'person'];
export const URN_SERVICE = 'urn:rookery:service:';

/** The services of Rookery that present a certificate to one another. */
export type ServiceKind = 'gateway' | 'host' | 'worker';
export const SERVICE_KINDS: readonly ServiceKind[] = ['gateway', 'host', 'worker'];

/**
 * The service a certificate's URI names stand for: exactly one `urn:rookery:` name, a service one, or null.
 * A service certificate carries no principal, so `identityFromUris` refuses it (it is no client's).
 */
export function serviceFromUris(uris: readonly string[]): ServiceKind | null {
  const ours = uris.filter((uri) => uri.startsWith('urn:rookery:'));
  if (ours.length !== 1 || !ours[0]!.startsWith(URN_SERVICE)) return null;
  const name = ours[0]!.slice(URN_SERVICE.length);
  return SERVICE_KINDS.find((kind) => kind === name) ?? null;
}

/** OID of the clientAuth extended key usage. */
export const EKU_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
export const EKU_SERVER_AUTH = '1.3.6.1.5.5.7.3.1';

export interface EncodedIdentity {
  principalId: string;
  tenantId: string | null;
  kind: PrincipalKind;
}

export function identityUris(identity: EncodedIdentity): string[] {
  return [
    URN_PRINCIPAL + encodeURIComponent(identity.principalId),
    identity.tenantId === null ? URN_OPERATOR : URN_TENANT + encodeURIComponent(identity.tenantId),
    URN_KIND + identity.kind,
  ];
}

/**
 * Reads the identity back from a certificate's URI names. Exactly one principal, exactly one
 * of tenant/operator and exactly one known kind, or null (not a Rookery identity).
 */
export function identityFromUris(uris: readonly string[]): EncodedIdentity | null {
  let principalId: string | null = null;
  let tenantId: string | null | undefined;
  let kind: PrincipalKind | null = null;
  let seen = 0;
  for (const uri of uris) {
    if (!uri.startsWith('urn:rookery:')) continue;
    seen++;
    if (uri.startsWith(URN_PRINCIPAL)) {
      if (principalId !== null) return null;
      principalId = decode(uri.slice(URN_PRINCIPAL.length));
      if (principalId === null) return null;
    } else if (uri.startsWith(URN_TENANT)) {
      if (tenantId !== undefined) return null;
      tenantId = decode(uri.slice(URN_TENANT.length));
      if (tenantId === null) return null;
    } else if (uri === URN_OPERATOR) {
      if (tenantId !== undefined) return null;
      tenantId = null;
    } else if (uri.startsWith(URN_KIND)) {
      if (kind !== null) return null;
      const value = uri.slice(URN_KIND.length);
      if (value !== 'program' && value !== 'person') return null;
      kind = value;
    } else {
      return null;
    }
  }
  if (seen !== 3 || principalId === null || tenantId === undefined || kind === null) return null;
  return { principalId, tenantId, kind };
}

function decode(value: string): string | null {
  if (value.length === 0) return null;
  try {
    const decoded = decodeURIComponent(value);
    // Only the canonical spelling counts, so one identity has exactly one encoding.
    return encodeURIComponent(decoded) === value ? decoded : null;
  } catch {
    return null;
  }
}
