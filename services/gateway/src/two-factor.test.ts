// The TOTP check on real control stores (a SQLite file in a temp dir), with two TwoFactor instances on
// two store connections standing in for two gateways. Attempts are started all at once, so every check
// runs before any other attempt finishes: the interleaving a burst of requests produces.
import path from 'node:path';
import { type ControlStore, openSqliteControlStore, type Principal } from '@rookery/control-store';
import { loadOrCreateMasterKey, sealSecret } from '@rookery/pki';
import { makeTempDir } from '@rookery/testkit';
import { generate, generateSecret } from 'otplib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TwoFactor } from './two-factor.js';

const LIMIT = { maxAttempts: 5, windowMs: 5 * 60_000 };

let tmp: ReturnType<typeof makeTempDir>;
let stores: ControlStore[];
let masterKey: Buffer;
let person: Principal;
let secret: string;

beforeEach(async () => {
  tmp = makeTempDir('rookery-two-factor-');
  const file = path.join(tmp.dir, 'control.db');
  stores = [await openSqliteControlStore(file), await openSqliteControlStore(file)];
  masterKey = await loadOrCreateMasterKey(path.join(tmp.dir, 'master.key'));
  await stores[0]!.createTenant({ id: 'acme', name: 'Acme' });
  person = await stores[0]!.createPrincipal({
    tenantId: 'acme',
    kind: 'person',
    name: 'Ada',
    role: { kind: 'tenant-admin' },
  });
  secret = generateSecret();
  await stores[0]!.setTotpSecret(person.id, sealSecret(masterKey, secret, person.id));
});

afterEach(async () => {
  for (const store of stores) await store.close();
  tmp.cleanup();
});

/** Codes the authenticator does not show within two minutes of `at`. */
async function wrongCodes(count: number, at = Date.now()): Promise<string[]> {
  const now = Math.floor(at / 1000);
  const valid = new Set<string>();
  for (let t = now - 120; t <= now + 120; t += 30) valid.add(await generate({ secret, epoch: t }));
  const codes: string[] = [];
  for (let n = 123_456; codes.length < count; n += 7919) {
    const code = String(n % 1_000_000).padStart(6, '0');
    if (!valid.has(code)) codes.push(code);
  }
  return codes;
}

function outcomes(results: Awaited<ReturnType<TwoFactor['open']>>[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of results) {
    const key = r.ok ? 'opened' : r.code;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

describe('wrong codes', () => {
  it('checks exactly the allowed number of a burst of 50, through one gateway', async () => {
    const gateway = new TwoFactor(stores[0]!, masterKey, { limit: LIMIT });
    const results = await Promise.all(
      (await wrongCodes(50)).map((code) =>
        gateway.open(person, 'thumb', { code, minutes: 10, binding: 'certificate' }),
      ),
    );
    expect(outcomes(results)).toEqual({ InvalidTwoFactorCode: 5, TooManyTwoFactorAttempts: 45 });
  });

  it('checks exactly the allowed number of a burst of 50 split between two gateways', async () => {
    const gateways = stores.map((store) => new TwoFactor(store, masterKey, { limit: LIMIT }));
    const results = await Promise.all(
      (await wrongCodes(50)).map((code, i) =>
        gateways[i % 2]!.open(person, 'thumb', { code, minutes: 10, binding: 'certificate' }),
      ),
    );
    expect(outcomes(results)).toEqual({ InvalidTwoFactorCode: 5, TooManyTwoFactorAttempts: 45 });
  });

  it('says when to try again, refuses the right code while locked out, and lets it in after the window', async () => {
    const clock = { now: Date.now() };
    const gateway = new TwoFactor(stores[0]!, masterKey, { limit: LIMIT, now: () => clock.now });
    const start = clock.now;
    for (const code of await wrongCodes(5, start)) {
      clock.now += 1_000;
      const r = await gateway.open(person, 'thumb', { code, minutes: 10, binding: 'certificate' });
      expect(r.ok ? 'opened' : r.code).toBe('InvalidTwoFactorCode');
    }
    const right = await generate({ secret, epoch: Math.floor(clock.now / 1000) });
    const refused = await gateway.open(person, 'thumb', { code: right, minutes: 10, binding: 'certificate' });
    // The window opened with the first attempt, 1 s after `start`; 5 s have passed since.
    expect(refused).toMatchObject({ ok: false, status: 429, retryAfterSeconds: 296 });
    clock.now = start + 1_000 + LIMIT.windowMs;
    const later = await generate({ secret, epoch: Math.floor(clock.now / 1000) });
    const opened = await gateway.open(person, 'thumb', { code: later, minutes: 10, binding: 'certificate' });
    expect(opened.ok).toBe(true);
  });

  it('starts the count again after a code that opens a session', async () => {
    const gateway = new TwoFactor(stores[0]!, masterKey, { limit: LIMIT });
    const wrong = await wrongCodes(9);
    for (const code of wrong.slice(0, 4))
      await gateway.open(person, 'thumb', { code, minutes: 10, binding: 'certificate' });
    const opened = await gateway.open(person, 'thumb', {
      code: await generate({ secret }),
      minutes: 10,
      binding: 'certificate',
    });
    expect(opened.ok).toBe(true);
    const after: string[] = [];
    for (const code of wrong.slice(4)) {
      const r = await gateway.open(person, 'thumb', { code, minutes: 10, binding: 'certificate' });
      after.push(r.ok ? 'opened' : r.code);
    }
    expect(after).toEqual(Array(5).fill('InvalidTwoFactorCode'));
  });

  it('counts nothing for a person without an authenticator', async () => {
    await stores[0]!.clearTotpSecret(person.id);
    const gateway = new TwoFactor(stores[0]!, masterKey, { limit: LIMIT });
    for (let i = 0; i < 7; i++) {
      const r = await gateway.open(person, 'thumb', { code: '123456', minutes: 10, binding: 'certificate' });
      expect(r.ok ? 'opened' : r.code).toBe('TwoFactorNotEnrolled');
    }
  });
});
