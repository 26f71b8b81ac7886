// The one test suite every ControlStore must pass. sqlite-store.test.ts and
// postgres-store.test.ts register it with their own factory, so both dialects
// are held to exactly the same behaviour.
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { failure } from '../test-fixtures/failure.js';
import type { ControlStore } from './control-store.js';
import { KyselyControlStore } from './kysely-store.js';
import { appliedMigrations, MIGRATIONS } from './migrations.js';
import { TOTP_STEPS_KEPT } from './two-factor.js';
import { type CertificateRecord, DEFAULT_QUOTA, type Principal, type UsageRow } from './types.js';

export interface StoreBacking {
  /** The store under test, on a backing nobody else used. */
  store: ControlStore;
  /** Another store instance on the same backing (same file / same database), as another process would open. */
  openAnother(): Promise<ControlStore>;
  /** Removes the backing (every store on it is closed by then). */
  cleanup(): Promise<void>;
}

export type StoreFactory = () => Promise<StoreBacking>;

const MINUTE = 60_000;
const T0 = 28_000_000 * MINUTE; // a minute in 2023

function kysely(store: ControlStore): KyselyControlStore {
  if (!(store instanceof KyselyControlStore))
    throw new Error('the contract inspects KyselyControlStore rows');
  return store;
}

let serialCounter = 0;
function certificate(principalId: string, overrides: Partial<CertificateRecord> = {}): CertificateRecord {
  serialCounter += 1;
  const serial = `01${serialCounter.toString(16).padStart(30, '0')}`;
  return {
    serial,
    thumbprint: serial.padEnd(64, 'a'),
    principalId,
    notBefore: T0,
    notAfter: T0 + 365 * 24 * 60 * MINUTE,
    revokedAt: null,
    pem: `-----BEGIN CERTIFICATE-----\n${serial}\n-----END CERTIFICATE-----\n`,
    ...overrides,
  };
}

function usageRow(tenantId: string, minute: number, n: number): UsageRow {
  return { tenantId, minute, requests: n, bytesIn: 10 * n, bytesOut: 100 * n, workUnits: 3 * n };
}

export function controlStoreContract(factory: StoreFactory): void {
  let backing: StoreBacking;
  let store: ControlStore;
  const others: ControlStore[] = [];

  async function another(): Promise<ControlStore> {
    const opened = await backing.openAnother();
    others.push(opened);
    return opened;
  }

  beforeEach(async () => {
    backing = await factory();
    store = backing.store;
  });

  afterEach(async () => {
    for (const other of others.splice(0)) await other.close();
    await store.close();
    await backing.cleanup();
  });

  async function tenantWithAdmin(id = 'acme'): Promise<Principal> {
    await store.createTenant({ id, name: `${id} Ltd` });
    return store.createPrincipal({
      tenantId: id,
      kind: 'program',
      name: 'ci',
      role: { kind: 'tenant-admin' },
    });
  }

  describe('tenants', () => {
    it('creates a tenant with the default quota and reads it back', async () => {
      const created = await store.createTenant({ id: 'acme', name: 'Acme Ltd' });
      expect(created).toMatchObject({ id: 'acme', name: 'Acme Ltd', quota: DEFAULT_QUOTA });
      expect(DEFAULT_QUOTA).toEqual({ requestsPerSecond: 200, storageBytes: 1024 ** 3 });
      expect(typeof created.createdAt).toBe('number');
      expect(await store.getTenant('acme')).toEqual(created);
      expect(await store.getTenant('nobody')).toBeNull();
    });

    it('fills a partial quota from the defaults and keeps a large storage quota exact', async () => {
      const big = 5 * 1024 ** 4; // 5 TiB: more than 32 bits
      const a = await store.createTenant({ id: 'a', name: 'A', quota: { requestsPerSecond: 50 } });
      const b = await store.createTenant({ id: 'b', name: 'B', quota: { storageBytes: big } });
      expect(a.quota).toEqual({ requestsPerSecond: 50, storageBytes: DEFAULT_QUOTA.storageBytes });
      expect((await store.getTenant('b'))?.quota).toEqual({ requestsPerSecond: 200, storageBytes: big });
      expect(b.quota.storageBytes).toBe(big);
    });

    it('lists tenants ordered by id', async () => {
      for (const id of ['zeta', 'alpha', 'mid-1']) await store.createTenant({ id, name: id });
      expect((await store.listTenants()).map((t) => t.id)).toEqual(['alpha', 'mid-1', 'zeta']);
    });

    it('refuses a second tenant with the same id (TenantAlreadyExists) and keeps the first', async () => {
      await store.createTenant({ id: 'acme', name: 'First' });
      const error = await failure(store.createTenant({ id: 'acme', name: 'Second' }));
      expect(error.code).toBe('TenantAlreadyExists');
      expect(error.status).toBe(409);
      expect((await store.getTenant('acme'))?.name).toBe('First');
    });

    it('rejects invalid tenant ids (InvalidTenantId), names and quotas (InvalidRequest)', async () => {
      for (const id of ['', 'Acme', '-acme', 'a_b', 'a'.repeat(64), 'a b']) {
        expect((await failure(store.createTenant({ id, name: 'x' }))).code).toBe('InvalidTenantId');
      }
      expect((await failure(store.createTenant({ id: 'a'.repeat(63), name: ' ' }))).code).toBe(
        'InvalidRequest',
      );
      const rate = await failure(
        store.createTenant({ id: 'ok', name: 'x', quota: { requestsPerSecond: 0 } }),
      );
      expect(rate.code).toBe('InvalidRequest');
      expect(rate.message).toContain('requestsPerSecond');
      const bytes = await failure(store.createTenant({ id: 'ok', name: 'x', quota: { storageBytes: -1 } }));
      expect(bytes.code).toBe('InvalidRequest');
      expect(await store.listTenants()).toEqual([]);
    });

    it('updates only the quota fields given and answers the tenant as it now is', async () => {
      await store.createTenant({ id: 'acme', name: 'Acme' });
      const rate = await store.updateQuota('acme', { requestsPerSecond: 10 });
      expect(rate.quota).toEqual({ requestsPerSecond: 10, storageBytes: DEFAULT_QUOTA.storageBytes });
      const both = await store.updateQuota('acme', { storageBytes: 2048 });
      expect(both.quota).toEqual({ requestsPerSecond: 10, storageBytes: 2048 });
      expect(await store.updateQuota('acme', {})).toEqual(both);
      expect(await store.getTenant('acme')).toEqual(both);
      expect((await failure(store.updateQuota('nobody', { storageBytes: 1 }))).code).toBe('TenantNotFound');
      expect((await failure(store.updateQuota('nobody', {}))).code).toBe('TenantNotFound');
      expect((await failure(store.updateQuota('acme', { requestsPerSecond: 1.5 }))).code).toBe(
        'InvalidRequest',
      );
    });

    it('deletes a tenant with everything it owns, revoking its certificates; the id can be reused', async () => {
      const admin = await tenantWithAdmin('acme');
      const other = await tenantWithAdmin('other');
      await store.createDatabase('acme', 'shop');
      await store.acquireLease('host-1', 'https://host-1.internal:8443', 10, 60_000);
      await store.placeTenant('acme');
      await store.setTotpSecret(admin.id, 'sealed');
      await store.claimTotpStep(admin.id, 5);
      const cert = certificate(admin.id);
      const otherCert = certificate(other.id);
      await store.addCertificate(cert);
      await store.addCertificate(otherCert);
      await store.addUsage([usageRow('acme', T0, 1), usageRow('other', T0, 2)]);

      await store.deleteTenant('acme', T0 + 5);

      expect(await store.getTenant('acme')).toBeNull();
      expect(await store.listDatabases('acme')).toEqual([]);
      expect(await store.getPlacement('acme')).toBeNull();
      expect(await store.getPrincipal(admin.id)).toBeNull();
      expect(await store.listPrincipals('acme')).toEqual([]);
      expect(await store.getTotpSecret(admin.id)).toBeNull();
      expect(await store.usage('acme', 0, Number.MAX_SAFE_INTEGER)).toEqual([]);
      // The certificate stays so a later handshake reads as revoked, and the gateway's poll sees it.
      expect((await store.getCertificateBySerial(cert.serial))?.revokedAt).toBe(T0 + 5);
      expect((await store.listRevokedSince(0)).map((r) => r.serial)).toEqual([cert.serial]);
      // Other tenants are untouched.
      expect((await store.getCertificateBySerial(otherCert.serial))?.revokedAt).toBeNull();
      expect(await store.usage('other', 0, Number.MAX_SAFE_INTEGER)).toHaveLength(1);
      expect(await store.getPrincipal(other.id)).not.toBeNull();

      expect((await failure(store.deleteTenant('acme'))).code).toBe('TenantNotFound');
      await store.createTenant({ id: 'acme', name: 'Acme again' });
      expect(await store.listDatabases('acme')).toEqual([]);
    });
  });

  describe('databases', () => {
    it('creates, lists (by name, case kept) and deletes databases, names compared case-insensitively', async () => {
      await store.createTenant({ id: 'acme', name: 'Acme' });
      await store.createTenant({ id: 'other', name: 'Other' });
      await store.createDatabase('acme', 'Shop');
      await store.createDatabase('acme', 'analytics.eu');
      const created = await store.createDatabase('other', 'shop');
      expect(created).toMatchObject({ tenantId: 'other', name: 'shop' });
      expect((await store.listDatabases('acme')).map((d) => d.name)).toEqual(['analytics.eu', 'Shop']);

      const duplicate = await failure(store.createDatabase('acme', 'SHOP'));
      expect(duplicate.code).toBe('DatabaseAlreadyExists');
      expect(duplicate.status).toBe(409);

      await store.deleteDatabase('acme', 'shop');
      expect((await store.listDatabases('acme')).map((d) => d.name)).toEqual(['analytics.eu']);
      expect((await store.listDatabases('other')).map((d) => d.name)).toEqual(['shop']);
      expect((await failure(store.deleteDatabase('acme', 'shop'))).code).toBe('DatabaseNotFound');
    });

    it('rejects bad database names and unknown tenants', async () => {
      await store.createTenant({ id: 'acme', name: 'Acme' });
      for (const name of ['', '.hidden', 'a/b', 'x'.repeat(65)]) {
        expect((await failure(store.createDatabase('acme', name))).code).toBe('InvalidDatabaseName');
      }
      expect((await failure(store.createDatabase('nobody', 'shop'))).code).toBe('TenantNotFound');
      expect(await store.listDatabases('nobody')).toEqual([]);
    });
  });

  describe('principals', () => {
    it('creates principals of every role with fresh ids and reads them back parsed', async () => {
      await store.createTenant({ id: 'acme', name: 'Acme' });
      const admin = await store.createPrincipal({
        tenantId: 'acme',
        kind: 'person',
        name: 'Ada',
        role: { kind: 'tenant-admin' },
      });
      const reader = await store.createPrincipal({
        tenantId: 'acme',
        kind: 'program',
        name: 'reporting',
        role: { kind: 'database', access: { shop: 'read-only', 'orders.eu': 'read-write' } },
      });
      const operator = await store.createPrincipal({
        tenantId: null,
        kind: 'person',
        name: 'Grace',
        role: { kind: 'operator' },
      });
      expect(new Set([admin.id, reader.id, operator.id]).size).toBe(3);
      expect(await store.getPrincipal(reader.id)).toEqual(reader);
      expect(reader.role).toEqual({
        kind: 'database',
        access: { shop: 'read-only', 'orders.eu': 'read-write' },
      });
      expect(await store.getPrincipal(operator.id)).toEqual(operator);
      expect(await store.getPrincipal('nobody')).toBeNull();
      expect((await store.listPrincipals('acme')).map((p) => p.id).sort()).toEqual(
        [admin.id, reader.id].sort(),
      );
      expect(await store.listPrincipals(null)).toEqual([operator]);
      expect(await store.listPrincipals('nobody')).toEqual([]);
    });

    it("pages a tenant's principals in creation order and counts them", async () => {
      await store.createTenant({ id: 'acme', name: 'Acme' });
      await store.createTenant({ id: 'globex', name: 'Globex' });
      for (let i = 0; i < 5; i++) {
        await store.createPrincipal({
          tenantId: 'acme',
          kind: 'program',
          name: `p${i}`,
          role: { kind: 'tenant-admin' },
        });
      }
      await store.createPrincipal({
        tenantId: 'globex',
        kind: 'program',
        name: 'other',
        role: { kind: 'tenant-admin' },
      });
      const all = await store.listPrincipals('acme');
      const pages = [
        await store.listPrincipals('acme', { start: 0, pageSize: 2 }),
        await store.listPrincipals('acme', { start: 2, pageSize: 2 }),
        await store.listPrincipals('acme', { start: 4, pageSize: 2 }),
      ];
      expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
      expect(pages.flat()).toEqual(all);
      expect(await store.listPrincipals('acme', { start: 5, pageSize: 2 })).toEqual([]);
      expect(await store.countPrincipals('acme')).toBe(5);
      expect(await store.countPrincipals('globex')).toBe(1);
      expect(await store.countPrincipals('nobody')).toBe(0);
      expect(await store.countPrincipals(null)).toBe(0);
    });

    it('refuses roles that do not fit the tenant, bad roles and unknown tenants', async () => {
      await store.createTenant({ id: 'acme', name: 'Acme' });
      const cases = [
        { tenantId: 'acme', kind: 'person', name: 'x', role: { kind: 'operator' } },
        { tenantId: null, kind: 'person', name: 'x', role: { kind: 'tenant-admin' } },
        { tenantId: 'acme', kind: 'robot', name: 'x', role: { kind: 'tenant-admin' } },
        { tenantId: 'acme', kind: 'program', name: '', role: { kind: 'tenant-admin' } },
        {
          tenantId: 'acme',
          kind: 'program',
          name: 'x',
          role: { kind: 'database', access: { shop: 'owner' } },
        },
        { tenantId: 'acme', kind: 'program', name: 'x', role: { kind: 'superuser' } },
      ] as const;
      for (const input of cases) {
        // biome-ignore lint/suspicious/noExplicitAny: deliberately invalid input from outside
        expect((await failure(store.createPrincipal(input as any))).code).toBe('InvalidRequest');
      }
      const missing = store.createPrincipal({
        tenantId: 'nobody',
        kind: 'program',
        name: 'x',
        role: { kind: 'tenant-admin' },
      });
      expect((await failure(missing)).code).toBe('TenantNotFound');
      expect(await store.listPrincipals('acme')).toEqual([]);
    });

    it('fails loudly on a stored role that no longer parses instead of granting anything', async () => {
      const admin = await tenantWithAdmin();
      await kysely(store)
        .db.updateTable('principals')
        .set({ role: JSON.stringify({ kind: 'root' }) })
        .where('id', '=', admin.id)
        .execute();
      const error = await failure(store.getPrincipal(admin.id));
      expect(error.code).toBe('InternalError');
      expect(error.message).toContain(admin.id);
    });

    it('deletes a principal with its TOTP state and revokes its certificates', async () => {
      const admin = await tenantWithAdmin();
      const keep = await store.createPrincipal({
        tenantId: 'acme',
        kind: 'program',
        name: 'keep',
        role: { kind: 'tenant-admin' },
      });
      const old = certificate(admin.id, { revokedAt: T0 + 1 });
      const live = certificate(admin.id);
      const kept = certificate(keep.id);
      for (const c of [old, live, kept]) await store.addCertificate(c);
      await store.setTotpSecret(admin.id, 'sealed');

      await store.deletePrincipal(admin.id, T0 + 9);

      expect(await store.getPrincipal(admin.id)).toBeNull();
      expect(await store.getTotpSecret(admin.id)).toBeNull();
      expect((await store.getCertificateBySerial(old.serial))?.revokedAt).toBe(T0 + 1);
      expect((await store.getCertificateBySerial(live.serial))?.revokedAt).toBe(T0 + 9);
      expect((await store.getCertificateBySerial(kept.serial))?.revokedAt).toBeNull();
      expect((await failure(store.deletePrincipal(admin.id))).code).toBe('PrincipalNotFound');
    });
  });

  describe('certificates and revocation', () => {
    it('adds certificates and finds them by thumbprint, serial (any case) and principal', async () => {
      const admin = await tenantWithAdmin();
      const later = certificate(admin.id, { notBefore: T0 + 10 });
      const first = certificate(admin.id, { notBefore: T0 });
      expect(await store.addCertificate(later)).toEqual(later);
      await store.addCertificate(first);
      expect(await store.getCertificateByThumbprint(first.thumbprint)).toEqual(first);
      expect(await store.getCertificateByThumbprint(first.thumbprint.toUpperCase())).toEqual(first);
      expect(await store.getCertificateBySerial(later.serial.toUpperCase())).toEqual(later);
      expect(await store.getCertificateBySerial('ff')).toBeNull();
      expect(await store.getCertificateByThumbprint('ab'.repeat(32))).toBeNull();
      expect(await store.listCertificates(admin.id)).toEqual([first, later]);
      expect(await store.listCertificates('nobody')).toEqual([]);
    });

    it('stores hex in lower case whatever the caller sent', async () => {
      const admin = await tenantWithAdmin();
      const c = certificate(admin.id);
      const stored = await store.addCertificate({
        ...c,
        serial: c.serial.toUpperCase(),
        thumbprint: c.thumbprint.toUpperCase(),
      });
      expect(stored).toEqual(c);
      expect(await store.getCertificateBySerial(c.serial)).toEqual(c);
    });

    it('refuses duplicates (CertificateAlreadyExists), unknown principals and malformed records', async () => {
      const admin = await tenantWithAdmin();
      const c = certificate(admin.id);
      await store.addCertificate(c);
      const sameSerial = await failure(store.addCertificate({ ...c, thumbprint: 'f'.repeat(64) }));
      expect(sameSerial.code).toBe('CertificateAlreadyExists');
      const sameThumbprint = await failure(
        store.addCertificate({ ...certificate(admin.id), thumbprint: c.thumbprint }),
      );
      expect(sameThumbprint.code).toBe('CertificateAlreadyExists');
      expect((await failure(store.addCertificate(certificate('nobody')))).code).toBe('PrincipalNotFound');
      const badThumbprint = await failure(
        store.addCertificate({ ...certificate(admin.id), thumbprint: 'abc' }),
      );
      expect(badThumbprint.code).toBe('InvalidRequest');
      const badSerial = await failure(store.addCertificate({ ...certificate(admin.id), serial: 'not-hex' }));
      expect(badSerial.code).toBe('InvalidRequest');
      expect(await store.listCertificates(admin.id)).toEqual([c]);
    });

    it('revokes once (idempotent, first time kept) and lists revocations since a time, inclusive', async () => {
      const admin = await tenantWithAdmin();
      const [a, b, c, never] = [1, 2, 3, 4].map(() => certificate(admin.id));
      for (const cert of [a!, b!, c!, never!]) await store.addCertificate(cert);

      expect(await store.revokeCertificate(b!.serial, T0 + 200)).toBe(true);
      expect(await store.revokeCertificate(a!.serial.toUpperCase(), T0 + 100)).toBe(true);
      expect(await store.revokeCertificate(c!.serial, T0 + 300)).toBe(true);
      expect(await store.revokeCertificate(a!.serial, T0 + 999)).toBe(false);
      expect((await store.getCertificateBySerial(a!.serial))?.revokedAt).toBe(T0 + 100);

      expect(await store.listRevokedSince(0)).toEqual([
        { serial: a!.serial, thumbprint: a!.thumbprint, revokedAt: T0 + 100 },
        { serial: b!.serial, thumbprint: b!.thumbprint, revokedAt: T0 + 200 },
        { serial: c!.serial, thumbprint: c!.thumbprint, revokedAt: T0 + 300 },
      ]);
      expect((await store.listRevokedSince(T0 + 200)).map((r) => r.serial)).toEqual([b!.serial, c!.serial]);
      expect(await store.listRevokedSince(T0 + 301)).toEqual([]);
      expect((await store.getCertificateBySerial(never!.serial))?.revokedAt).toBeNull();
      expect((await failure(store.revokeCertificate('abcdef', T0))).code).toBe('CertificateNotFound');
    });

    it('makes a revocation by one store instance visible to another at once (the gateway poll)', async () => {
      const admin = await tenantWithAdmin();
      const c = certificate(admin.id);
      await store.addCertificate(c);
      const gateway = await another();
      expect(await gateway.listRevokedSince(T0)).toEqual([]);
      await store.revokeCertificate(c.serial, T0 + 42);
      expect(await gateway.listRevokedSince(T0)).toEqual([
        { serial: c.serial, thumbprint: c.thumbprint, revokedAt: T0 + 42 },
      ]);
      expect((await gateway.getCertificateByThumbprint(c.thumbprint))?.revokedAt).toBe(T0 + 42);
    });
  });

  describe('TOTP', () => {
    it('sets, replaces, reads and clears a sealed secret', async () => {
      const person = await tenantWithAdmin();
      expect(await store.getTotpSecret(person.id)).toBeNull();
      await store.setTotpSecret(person.id, 'sealed-1');
      await store.setTotpSecret(person.id, 'sealed-2');
      expect(await store.getTotpSecret(person.id)).toBe('sealed-2');
      await store.clearTotpSecret(person.id);
      expect(await store.getTotpSecret(person.id)).toBeNull();
      await store.clearTotpSecret(person.id); // nothing left: still fine
      expect((await failure(store.setTotpSecret('nobody', 'x'))).code).toBe('PrincipalNotFound');
      expect((await failure(store.clearTotpSecret('nobody'))).code).toBe('PrincipalNotFound');
      expect((await failure(store.setTotpSecret(person.id, ''))).code).toBe('InvalidRequest');
    });

    it('hands a secret set for delivery to its person once: takeTotpDelivery answers it once, then null', async () => {
      const person = await tenantWithAdmin('acme');
      const other = await tenantWithAdmin('other');
      // Set the ordinary way (the admin was shown it): nothing to deliver.
      await store.setTotpSecret(person.id, 'sealed-0');
      expect(await store.hasTotpDelivery(person.id)).toBe(false);
      expect(await store.takeTotpDelivery(person.id)).toBeNull();

      await store.setTotpSecret(person.id, 'sealed-1', { deliver: true });
      expect(await store.hasTotpDelivery(person.id)).toBe(true);
      expect(await store.hasTotpDelivery(other.id)).toBe(false);
      expect(await store.takeTotpDelivery(other.id)).toBeNull();
      // Taken at once by many: one of them gets it (one atomic statement), the rest null.
      const taken = await Promise.all(Array.from({ length: 8 }, () => store.takeTotpDelivery(person.id)));
      expect(taken.filter((t) => t !== null)).toEqual(['sealed-1']);
      expect(await store.hasTotpDelivery(person.id)).toBe(false);
      // The secret stays the person's: delivered is not cleared.
      expect(await store.getTotpSecret(person.id)).toBe('sealed-1');
      // Replacing it the ordinary way drops a delivery still pending.
      await store.setTotpSecret(person.id, 'sealed-2', { deliver: true });
      await store.setTotpSecret(person.id, 'sealed-3');
      expect(await store.takeTotpDelivery(person.id)).toBeNull();
      await store.setTotpSecret(person.id, 'sealed-4', { deliver: true });
      await store.clearTotpSecret(person.id);
      expect(await store.takeTotpDelivery(person.id)).toBeNull();
    });

    it('claims a step exactly once per principal; replays answer false', async () => {
      const a = await tenantWithAdmin('acme');
      const b = await tenantWithAdmin('other');
      const step = 56_000_000;
      expect(await store.claimTotpStep(a.id, step)).toBe(true);
      expect(await store.claimTotpStep(a.id, step)).toBe(false);
      expect(await store.claimTotpStep(a.id, step + 1)).toBe(true);
      expect(await store.claimTotpStep(a.id, step - 1)).toBe(true);
      expect(await store.claimTotpStep(b.id, step)).toBe(true);
      expect(await store.claimTotpStep(b.id, step)).toBe(false);
      const otherInstance = await another();
      expect(await otherInstance.claimTotpStep(a.id, step)).toBe(false);
      expect((await failure(store.claimTotpStep('nobody', step))).code).toBe('PrincipalNotFound');
      expect((await failure(store.claimTotpStep(a.id, -1))).code).toBe('InvalidRequest');
    });

    it('lets exactly one of many concurrent claims of the same step win, across two store instances', async () => {
      const person = await tenantWithAdmin();
      const second = await another();
      for (let round = 0; round < 5; round += 1) {
        const step = 56_000_100 + round;
        const claims = Array.from({ length: 24 }, (_, i) =>
          (i % 2 === 0 ? store : second).claimTotpStep(person.id, step),
        );
        const results = await Promise.all(claims);
        expect(results.filter(Boolean)).toHaveLength(1);
      }
    });

    it('prunes steps far behind the newest and refuses claims that old', async () => {
      const person = await tenantWithAdmin();
      const newest = 56_000_000;
      for (let s = newest - 3 * TOTP_STEPS_KEPT; s < newest; s += 5) {
        expect(await store.claimTotpStep(person.id, s)).toBe(true);
      }
      expect(await store.claimTotpStep(person.id, newest)).toBe(true);
      const kept = await kysely(store)
        .db.selectFrom('totp_steps')
        .select('step')
        .where('principal_id', '=', person.id)
        .orderBy('step')
        .execute();
      expect(kept.length).toBeGreaterThan(0);
      expect(kept.every((r) => r.step >= newest - TOTP_STEPS_KEPT)).toBe(true);
      // A pruned step cannot be replayed either.
      expect(await store.claimTotpStep(person.id, newest - 3 * TOTP_STEPS_KEPT)).toBe(false);
      expect(await store.claimTotpStep(person.id, newest - TOTP_STEPS_KEPT)).toBe(false);
      expect(await store.claimTotpStep(person.id, newest - TOTP_STEPS_KEPT + 1)).toBe(true);
    });
  });

  describe('two-factor attempts', () => {
    const limit = { maxAttempts: 5, windowMs: 5 * MINUTE };

    it('allows the limit in a window, refuses until it ends, then opens a new window', async () => {
      const person = await tenantWithAdmin();
      const taken = [];
      for (let i = 0; i < 7; i += 1) taken.push(await store.takeTwoFactorAttempt(person.id, limit, T0 + i));
      expect(taken).toEqual([
        ...[1, 2, 3, 4, 5].map((attempts) => ({ allowed: true, attempts })),
        { allowed: false, retryAt: T0 + limit.windowMs },
        { allowed: false, retryAt: T0 + limit.windowMs },
      ]);
      expect(await store.takeTwoFactorAttempt(person.id, limit, T0 + limit.windowMs - 1)).toEqual({
        allowed: false,
        retryAt: T0 + limit.windowMs,
      });
      const next = T0 + limit.windowMs;
      expect(await store.takeTwoFactorAttempt(person.id, limit, next)).toEqual({
        allowed: true,
        attempts: 1,
      });
      expect(await store.takeTwoFactorAttempt(person.id, limit, next + 1)).toEqual({
        allowed: true,
        attempts: 2,
      });
    });

    it('counts per principal, starts again when cleared, and goes with its principal', async () => {
      const a = await tenantWithAdmin('acme');
      const b = await tenantWithAdmin('other');
      for (let i = 0; i < 5; i += 1) await store.takeTwoFactorAttempt(a.id, limit, T0);
      expect((await store.takeTwoFactorAttempt(a.id, limit, T0)).allowed).toBe(false);
      expect(await store.takeTwoFactorAttempt(b.id, limit, T0)).toEqual({ allowed: true, attempts: 1 });
      await store.clearTwoFactorAttempts(a.id);
      expect(await store.takeTwoFactorAttempt(a.id, limit, T0 + 1)).toEqual({ allowed: true, attempts: 1 });
      await store.deletePrincipal(a.id);
      const left = await kysely(store).db.selectFrom('two_factor_attempts').select('principal_id').execute();
      expect(left.map((r) => r.principal_id)).toEqual([b.id]);
      expect((await failure(store.takeTwoFactorAttempt(a.id, limit, T0))).code).toBe('PrincipalNotFound');
      const bad = [
        { maxAttempts: 0, windowMs: MINUTE },
        { maxAttempts: 5, windowMs: 0 },
        { maxAttempts: 1.5, windowMs: MINUTE },
      ];
      for (const l of bad)
        expect((await failure(store.takeTwoFactorAttempt(b.id, l, T0))).code).toBe('InvalidRequest');
      expect((await failure(store.takeTwoFactorAttempt(b.id, limit, -1))).code).toBe('InvalidRequest');
    });

    it('allows exactly the limit of 50 attempts taken at once from two store instances, window after window', async () => {
      const person = await tenantWithAdmin();
      const second = await another();
      for (let round = 0; round < 3; round += 1) {
        const at = T0 + round * limit.windowMs;
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            (i % 2 === 0 ? store : second).takeTwoFactorAttempt(person.id, limit, at),
          ),
        );
        const allowed = results.filter((r) => r.allowed);
        expect(allowed.map((r) => (r.allowed ? r.attempts : 0)).sort((x, y) => x - y)).toEqual([
          1, 2, 3, 4, 5,
        ]);
        expect(results.filter((r) => !r.allowed)).toHaveLength(45);
      }
    });
  });

  describe('two-factor sessions', () => {
    it('stores sessions, finds them by token hash and certificate-bound ones by thumbprint', async () => {
      const person = await tenantWithAdmin();
      const now = Date.now(); // sessions that ended before now are dropped on every create
      const browser = {
        tokenHash: 'b'.repeat(64),
        principalId: person.id,
        thumbprint: 't1',
        binding: 'browser' as const,
        expiresAt: now + 60 * MINUTE,
      };
      const shortCert = {
        ...browser,
        tokenHash: 'c'.repeat(64),
        binding: 'certificate' as const,
        expiresAt: now + MINUTE,
      };
      const longCert = { ...shortCert, tokenHash: 'd'.repeat(64), expiresAt: now + 30 * MINUTE };
      for (const s of [browser, shortCert, longCert]) await store.createTwoFactorSession(s);

      expect(await store.findTwoFactorSession(browser.tokenHash)).toEqual(browser);
      expect(await store.findTwoFactorSession('e'.repeat(64))).toBeNull();
      expect(await store.findCertificateSession('t1', now)).toEqual(longCert);
      expect(await store.findCertificateSession('t1', now + 30 * MINUTE)).toBeNull();
      expect(await store.findCertificateSession('t2', now)).toBeNull();

      // A browser's sign-out ends its own session only.
      await store.deleteTwoFactorSession(browser.tokenHash);
      await store.deleteTwoFactorSession('f'.repeat(64));
      expect(await store.findTwoFactorSession(browser.tokenHash)).toBeNull();
      expect(await store.findCertificateSession('t1', now)).toEqual(longCert);

      await store.deleteTwoFactorSessions(person.id);
      expect(await store.findTwoFactorSession(browser.tokenHash)).toBeNull();
      expect(await store.findCertificateSession('t1', now)).toBeNull();
    });

    it('drops ended sessions, refuses unknown principals, and goes with its principal', async () => {
      const person = await tenantWithAdmin();
      const ended = {
        tokenHash: 'a'.repeat(64),
        principalId: person.id,
        thumbprint: 't',
        binding: 'certificate' as const,
        expiresAt: 1,
      };
      await store.createTwoFactorSession(ended);
      const live = { ...ended, tokenHash: 'f'.repeat(64), expiresAt: Date.now() + 60 * MINUTE };
      await store.createTwoFactorSession(live);
      expect(await store.findTwoFactorSession(ended.tokenHash)).toBeNull();
      expect(await store.findTwoFactorSession(live.tokenHash)).toEqual(live);
      const unknown = await failure(
        store.createTwoFactorSession({ ...live, tokenHash: '9', principalId: 'nobody' }),
      );
      expect(unknown.code).toBe('PrincipalNotFound');
      await store.deletePrincipal(person.id);
      expect(await store.findTwoFactorSession(live.tokenHash)).toBeNull();
    });
  });

  describe('usage', () => {
    it('sums rows into (tenant, minute) across several addUsage calls and within one', async () => {
      await store.addUsage([usageRow('acme', T0, 1), usageRow('acme', T0 + MINUTE, 2)]);
      await store.addUsage([usageRow('acme', T0, 3), usageRow('acme', T0, 4), usageRow('other', T0, 7)]);
      await store.addUsage([]);
      await (await another()).addUsage([usageRow('acme', T0 + MINUTE, 5)]);
      expect(await store.usage('acme', T0, T0 + MINUTE)).toEqual([
        usageRow('acme', T0, 8),
        usageRow('acme', T0 + MINUTE, 7),
      ]);
      expect(await store.usage('other', 0, Number.MAX_SAFE_INTEGER)).toEqual([usageRow('other', T0, 7)]);
    });

    it('answers the inclusive range in ascending order', async () => {
      const minutes = [5, 1, 3, 2, 4].map((i) => T0 + i * MINUTE);
      await store.addUsage(minutes.map((m, i) => usageRow('acme', m, i + 1)));
      const rows = await store.usage('acme', T0 + 2 * MINUTE, T0 + 4 * MINUTE);
      expect(rows.map((r) => r.minute)).toEqual([T0 + 2 * MINUTE, T0 + 3 * MINUTE, T0 + 4 * MINUTE]);
      expect(await store.usage('acme', T0 + 6 * MINUTE, T0 + 9 * MINUTE)).toEqual([]);
      expect(await store.usage('nobody', 0, Number.MAX_SAFE_INTEGER)).toEqual([]);
    });

    it('keeps counts beyond 32 bits exact and returns them as numbers', async () => {
      const big = {
        tenantId: 'acme',
        minute: T0,
        requests: 1,
        bytesIn: 3 * 2 ** 40,
        bytesOut: 2 ** 45,
        workUnits: 0,
      };
      await store.addUsage([big]);
      await store.addUsage([big]);
      const [row] = await store.usage('acme', T0, T0);
      expect(row).toEqual({ ...big, requests: 2, bytesIn: 6 * 2 ** 40, bytesOut: 2 ** 46 });
      expect(typeof row?.bytesOut).toBe('number');
    });

    it('writes a large batch whole, and nothing of a batch with an invalid row', async () => {
      const many = Array.from({ length: 1_234 }, (_, i) => usageRow('acme', T0 + i * MINUTE, 1));
      await store.addUsage(many);
      expect(await store.usage('acme', 0, Number.MAX_SAFE_INTEGER)).toHaveLength(1_234);

      const bad = [usageRow('fresh', T0, 1), { ...usageRow('fresh', T0 + 1, 1) }];
      expect((await failure(store.addUsage(bad))).code).toBe('InvalidRequest');
      const negative = [usageRow('fresh', T0, 1), usageRow('fresh', T0 + MINUTE, -1)];
      expect((await failure(store.addUsage(negative))).code).toBe('InvalidRequest');
      expect(await store.usage('fresh', 0, Number.MAX_SAFE_INTEGER)).toEqual([]);
    });

    it('adds concurrent flushes from two store instances without losing any', async () => {
      const second = await another();
      const flushes = Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? store : second).addUsage([usageRow('acme', T0, 1), usageRow('acme', T0 + MINUTE, 2)]),
      );
      await Promise.all(flushes);
      expect(await store.usage('acme', T0, T0 + MINUTE)).toEqual([
        usageRow('acme', T0, 40),
        usageRow('acme', T0 + MINUTE, 80),
      ]);
    });
  });

  describe('opening and closing', () => {
    it('migrates once: a second open finds the schema current and the data intact', async () => {
      await store.createTenant({ id: 'acme', name: 'Acme' });
      const again = await another();
      const third = await another();
      expect(await again.getTenant('acme')).toMatchObject({ id: 'acme' });
      expect(await appliedMigrations(kysely(third).db)).toEqual(Object.keys(MIGRATIONS).sort());
      const tables = await sql<{ n: number }>`select count(*) as n from control_migrations`.execute(
        kysely(third).db,
      );
      expect(Number(tables.rows[0]?.n)).toBe(Object.keys(MIGRATIONS).length);
    });

    it('keeps data after close and reopen; close is idempotent', async () => {
      const admin = await tenantWithAdmin();
      await store.addUsage([usageRow('acme', T0, 2)]);
      await store.close();
      await store.close();
      store = await backing.openAnother();
      expect(await store.getPrincipal(admin.id)).toEqual(admin);
      expect(await store.usage('acme', T0, T0)).toEqual([usageRow('acme', T0, 2)]);
    });
  });
}
