// The first tenant and an admin certificate for it, so a fresh Rookery can be
// reached with curl at once (`npm start` calls this before starting the host
// and the gateway). Safe to run again: it reuses the tenant, the admin
// principal and the certificate files while they are still good, and replaces
// only what is missing or no longer works.
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  type CertificateRecord,
  type ControlStore,
  controlPaths,
  issuePrincipalCertificate,
  openControlStore,
  type Principal,
  parseInput,
  provisionTenant,
} from '@rookery/control-store';
import { type JobQueue, openJobQueue } from '@rookery/jobs';
import {
  type CertificateAuthority,
  loadOrCreateCertificateAuthority,
  loadOrCreateMasterKey,
} from '@rookery/pki';
import { isRookeryError, ROOKERY_JOB_TYPES, type RookeryJobTypes } from '@rookery/protocol';
import { z } from 'zod';
import { writeCertificateFiles } from './cert-files.js';

/** The admin principal's name and the base name of its files: admin.crt, admin.key. */
const ADMIN_NAME = 'admin';
const ADMIN_CERTIFICATE_DAYS = 365;
/** A certificate closer than this to its end is replaced now rather than failing next week. */
const RENEW_BEFORE_MS = 14 * 24 * 60 * 60_000;

const BootstrapOptionsSchema = z
  .object({
    dataDir: z
      .string()
      .min(1)
      .transform((dir) => path.resolve(dir)),
    tenantId: z.string().min(1),
    /** PostgreSQL instead of the embedded SQLite file. */
    databaseUrl: z.string().min(1).optional(),
  })
  .strict();
export type BootstrapOptions = z.input<typeof BootstrapOptionsSchema>;

export interface BootstrapResult {
  tenantId: string;
  principalId: string;
  serial: string;
  notAfter: number;
  certDir: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  /** What this run had to make; all false on a run that found everything in place. */
  created: { tenant: boolean; principal: boolean; certificate: boolean };
}

export async function bootstrap(options: BootstrapOptions): Promise<BootstrapResult> {
  const { dataDir, tenantId, databaseUrl } = parseInput(BootstrapOptionsSchema, options, 'bootstrap options');
  const paths = controlPaths(dataDir);
  const ca = await loadOrCreateCertificateAuthority(paths.certificateAuthority);
  // Made now so the gateway and `rookery totp enrol` find the same key from the start.
  await loadOrCreateMasterKey(paths.masterKey);
  const store = await openControlStore({ dataDir, databaseUrl });
  // The queue holds the purges of deleted tenants: a first tenant deleted a moment ago is not created
  // again before its purge has finished (TenantPurgePending), or the purge would reach the new one.
  const jobs = await openJobQueue({ dataDir, databaseUrl, types: ROOKERY_JOB_TYPES });
  try {
    const { admin, created } = await ensureTenantWithAdmin(store, jobs, tenantId);
    const certDir = paths.adminCertificates;
    const files = {
      certFile: path.join(certDir, `${ADMIN_NAME}.crt`),
      keyFile: path.join(certDir, `${ADMIN_NAME}.key`),
      caFile: path.join(certDir, 'ca.crt'),
    };
    const previous = await recordedCertificateOf(store, files.certFile);
    if (previous && isStillGood(previous, admin, ca, files)) {
      return {
        tenantId,
        principalId: admin.id,
        serial: previous.serial,
        notAfter: previous.notAfter,
        certDir,
        ...files,
        created: { ...created, certificate: false },
      };
    }
    const issued = await issuePrincipalCertificate(store, ca, {
      principalId: admin.id,
      validDays: ADMIN_CERTIFICATE_DAYS,
    });
    writeCertificateFiles(
      certDir,
      ADMIN_NAME,
      { certPem: issued.certPem, keyPem: issued.keyPem, caPem: issued.caPem },
      { overwrite: true },
    );
    // The files it replaces were the only handle on the old certificate: it stops counting too.
    if (previous && previous.revokedAt === null) await store.revokeCertificate(previous.serial, Date.now());
    return {
      tenantId,
      principalId: admin.id,
      serial: issued.record.serial,
      notAfter: issued.record.notAfter,
      certDir,
      ...files,
      created: { ...created, certificate: true },
    };
  } finally {
    await jobs.close();
    await store.close();
  }
}

async function ensureTenantWithAdmin(
  store: ControlStore,
  jobs: JobQueue<RookeryJobTypes>,
  tenantId: string,
): Promise<{ admin: Principal; created: { tenant: boolean; principal: boolean } }> {
  if (!(await store.getTenant(tenantId))) {
    try {
      const { admin } = await provisionTenant(
        store,
        { id: tenantId, name: tenantId, admin: { name: ADMIN_NAME, kind: 'program' } },
        jobs,
      );
      return { admin: admin!, created: { tenant: true, principal: true } };
    } catch (error) {
      // Another bootstrap made it a moment ago: use theirs.
      if (!isRookeryError(error) || error.code !== 'TenantAlreadyExists') throw error;
    }
  }
  const existing = (await store.listPrincipals(tenantId)).find(
    (p) => p.kind === 'program' && p.name === ADMIN_NAME && p.role.kind === 'tenant-admin',
  );
  if (existing) return { admin: existing, created: { tenant: false, principal: false } };
  const admin = await store.createPrincipal({
    tenantId,
    kind: 'program',
    name: ADMIN_NAME,
    role: { kind: 'tenant-admin' },
  });
  return { admin, created: { tenant: false, principal: true } };
}

/** The store's record of the certificate in `certFile`, or null if there is no such file or record. */
async function recordedCertificateOf(
  store: ControlStore,
  certFile: string,
): Promise<CertificateRecord | null> {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(fs.readFileSync(certFile));
  } catch {
    return null; // missing or unreadable: a new one is issued
  }
  return store.getCertificateByThumbprint(createHash('sha256').update(cert.raw).digest('hex'));
}

/** Recorded for this admin, not revoked, not near its end, issued by today's CA, and its key file matches. */
function isStillGood(
  record: CertificateRecord,
  admin: Principal,
  ca: CertificateAuthority,
  files: { certFile: string; keyFile: string; caFile: string },
): boolean {
  if (record.principalId !== admin.id || record.revokedAt !== null) return false;
  if (record.notAfter - Date.now() < RENEW_BEFORE_MS) return false;
  try {
    const cert = new X509Certificate(fs.readFileSync(files.certFile));
    if (!cert.verify(new X509Certificate(ca.certPem).publicKey)) return false;
    if (!cert.checkPrivateKey(createPrivateKey(fs.readFileSync(files.keyFile)))) return false;
    return fs.readFileSync(files.caFile, 'utf8') === ca.certPem;
  } catch {
    return false;
  }
}
