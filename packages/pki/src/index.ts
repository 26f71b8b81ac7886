// @rookery/pki: Rookery's certificate authority and crypto helpers, used by the control
// plane (issues certificates, seals TOTP secrets), the gateway (reads identities from
// client certificates) and the CLI. This file is the package's one door.
export {
  CA_CERT_FILE,
  CA_KEY_FILE,
  CertificateAuthority,
  type CertificateAuthorityMaterial,
  type CreateCertificateAuthorityOptions,
  createCertificateAuthority,
  type LoadOrCreateOptions,
  loadOrCreateCertificateAuthority,
} from './ca.js';
export {
  type CertificateFiles,
  type CertificatePair,
  ensureCertificatePair,
  RENEW_BEFORE_MS,
  readCertificatePair,
  writeCertificatePair,
} from './certificate-files.js';
export { isPkiError, PkiError, type PkiErrorCode, PkiErrorCodes } from './errors.js';
export { type CertificateIdentity, identityOf } from './identity.js';
export {
  type PrincipalKind,
  SERVICE_KINDS,
  type ServiceKind,
  URN_KIND,
  URN_OPERATOR,
  URN_PRINCIPAL,
  URN_SERVICE,
  URN_TENANT,
} from './identity-encoding.js';
export {
  type ClientCertificateOptions,
  type IssuedCertificate,
  issueClientCertificate,
  issueServerCertificate,
  issueServiceCertificate,
  type ServerCertificateOptions,
  type ServiceCertificateOptions,
} from './issue.js';
export { DEFAULT_KEY_TYPE, KEY_TYPES, type KeyType } from './keys.js';
export { type Pkcs12Options, toPkcs12 } from './pkcs12.js';
export { loadOrCreateMasterKey, openSecret, sealSecret } from './sealed-secret.js';
export { serviceOf } from './service-identity.js';
