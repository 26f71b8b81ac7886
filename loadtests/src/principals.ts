// Principals the scenario sets need beyond the tenant's admin (an operator
// for cold starts, people with authenticators for auth), made in the stack's
// control store with the operations the CLI uses, their certificates written
// as PEM files for k6's tlsAuth.
import fs from 'node:fs';
import path from 'node:path';
import {
  type ControlStore,
  type CreatePrincipalInput,
  controlPaths,
  enrolTotp,
  issuePrincipalCertificate,
} from '@rookery/control-store';
import { loadOrCreateCertificateAuthority, loadOrCreateMasterKey } from '@rookery/pki';
import type { RookeryStack } from './stack.js';

export interface CertificateFiles {
  principalId: string;
  certFile: string;
  keyFile: string;
}

export interface Person extends CertificateFiles {
  /** Base32 TOTP secret, as an authenticator app holds it. */
  totpSecret: string;
}

/** Creates a principal and writes a certificate for it to `<data>/certs/<name>.crt|.key`. */
export async function principalWithCertificate(
  stack: RookeryStack,
  store: ControlStore,
  input: CreatePrincipalInput,
): Promise<CertificateFiles> {
  const ca = await loadOrCreateCertificateAuthority(controlPaths(stack.dataDir).certificateAuthority);
  const principal = await store.createPrincipal(input);
  const issued = await issuePrincipalCertificate(store, ca, { principalId: principal.id });
  const dir = path.join(stack.dataDir, 'certs');
  fs.mkdirSync(dir, { recursive: true });
  const certFile = path.join(dir, `${input.name}.crt`);
  const keyFile = path.join(dir, `${input.name}.key`);
  fs.writeFileSync(certFile, issued.certPem);
  fs.writeFileSync(keyFile, issued.keyPem, { mode: 0o600 });
  return { principalId: principal.id, certFile, keyFile };
}

/** A person (tenant admin) with a certificate and an enrolled authenticator. */
export async function personWithAuthenticator(
  stack: RookeryStack,
  store: ControlStore,
  name: string,
): Promise<Person> {
  const files = await principalWithCertificate(stack, store, {
    tenantId: stack.tenantId,
    kind: 'person',
    name,
    role: { kind: 'tenant-admin' },
  });
  const masterKey = await loadOrCreateMasterKey(controlPaths(stack.dataDir).masterKey);
  const { secret } = await enrolTotp(store, masterKey, { principalId: files.principalId });
  return { ...files, totpSecret: secret };
}
