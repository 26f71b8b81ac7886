import { generate, verify } from 'otplib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Principal } from '../store/types.js';
import { type EmbeddedControl, openEmbeddedControl } from '../test-fixtures/embedded.js';
import {
  collectTotpEnrolment,
  enrolTotp,
  openTotpSecret,
  pendingTotpEnrolment,
  resetTotp,
  startTotpEnrolment,
} from './totp.js';

let control: EmbeddedControl;
let ada: Principal;
beforeEach(async () => {
  control = await openEmbeddedControl();
  await control.store.createTenant({ id: 'acme', name: 'Acme' });
  ada = await control.store.createPrincipal({
    tenantId: 'acme',
    kind: 'person',
    name: 'Ada',
    role: { kind: 'tenant-admin' },
  });
});
afterEach(async () => control.close());

describe('enrolTotp', () => {
  it('stores the secret sealed to the principal and answers the otpauth URI an app scans', async () => {
    const { secret, uri } = await enrolTotp(control.store, control.masterKey, { principalId: ada.id });
    const url = new URL(uri);
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(decodeURIComponent(url.pathname)).toBe('/Rookery:Ada@acme');
    expect(url.searchParams.get('secret')).toBe(secret);
    expect(url.searchParams.get('issuer')).toBe('Rookery');

    const sealed = await control.store.getTotpSecret(ada.id);
    expect(sealed).not.toContain(secret);
    // What the gateway does with a code: open with the principal id as context, then verify.
    const opened = openTotpSecret(control.masterKey, sealed!, ada.id);
    expect(opened).toBe(secret);
    expect((await verify({ secret: opened, token: await generate({ secret }) })).valid).toBe(true);
    // Bound to the principal: the same sealed value does not open as someone else's.
    expect(() => openTotpSecret(control.masterKey, sealed!, 'someone-else')).toThrow();
  });

  it('keeps an existing authenticator until it is reset, and then enrols a new one', async () => {
    const first = await enrolTotp(control.store, control.masterKey, { principalId: ada.id });
    await expect(enrolTotp(control.store, control.masterKey, { principalId: ada.id })).rejects.toMatchObject({
      code: 'TwoFactorAlreadyEnrolled',
    });
    await control.store.createTwoFactorSession({
      tokenHash: 'h',
      principalId: ada.id,
      thumbprint: 't',
      binding: 'certificate',
      expiresAt: Date.now() + 60_000,
    });
    expect(await resetTotp(control.store, { principalId: ada.id })).toMatchObject({ hadAuthenticator: true });
    expect(await control.store.getTotpSecret(ada.id)).toBeNull();
    expect(await control.store.findTwoFactorSession('h')).toBeNull();
    const second = await enrolTotp(control.store, control.masterKey, { principalId: ada.id });
    expect(second.secret).not.toBe(first.secret);
  });

  it('refuses programs and unknown principals', async () => {
    const bot = await control.store.createPrincipal({
      tenantId: 'acme',
      kind: 'program',
      name: 'bot',
      role: { kind: 'tenant-admin' },
    });
    await expect(enrolTotp(control.store, control.masterKey, { principalId: bot.id })).rejects.toMatchObject({
      code: 'InvalidRequest',
    });
    await expect(
      enrolTotp(control.store, control.masterKey, { principalId: 'nobody' }),
    ).rejects.toMatchObject({
      code: 'PrincipalNotFound',
    });
    await expect(resetTotp(control.store, { principalId: 'nobody' })).rejects.toMatchObject({
      code: 'PrincipalNotFound',
    });
  });
});

describe('startTotpEnrolment and collectTotpEnrolment', () => {
  it('enrols the person without answering the secret, and hands it to the person once', async () => {
    const started = await startTotpEnrolment(control.store, control.masterKey, { principalId: ada.id });
    expect(started).toEqual({ principal: ada, pending: true });
    expect(JSON.stringify(started)).not.toMatch(/secret|otpauth/i);
    expect(await pendingTotpEnrolment(control.store, ada.id)).toBe(true);

    const collected = await collectTotpEnrolment(control.store, control.masterKey, ada);
    expect(collected).not.toBeNull();
    const { secret, uri } = collected!;
    expect(new URL(uri).searchParams.get('secret')).toBe(secret);
    // The same secret the gateway checks codes against.
    expect(openTotpSecret(control.masterKey, (await control.store.getTotpSecret(ada.id))!, ada.id)).toBe(
      secret,
    );
    // Once.
    expect(await collectTotpEnrolment(control.store, control.masterKey, ada)).toBeNull();
    expect(await pendingTotpEnrolment(control.store, ada.id)).toBe(false);
  });

  it('refuses programs and a person already enrolled, as enrolTotp does', async () => {
    const bot = await control.store.createPrincipal({
      tenantId: 'acme',
      kind: 'program',
      name: 'bot',
      role: { kind: 'tenant-admin' },
    });
    await expect(
      startTotpEnrolment(control.store, control.masterKey, { principalId: bot.id }),
    ).rejects.toMatchObject({ code: 'InvalidRequest' });
    await enrolTotp(control.store, control.masterKey, { principalId: ada.id });
    await expect(
      startTotpEnrolment(control.store, control.masterKey, { principalId: ada.id }),
    ).rejects.toMatchObject({ code: 'TwoFactorAlreadyEnrolled' });
    // Enrolled the ordinary way: nothing for the person to collect.
    expect(await collectTotpEnrolment(control.store, control.masterKey, ada)).toBeNull();
  });
});
