// TOTP enrolment for people. The secret is sealed under the master key with the
// principal id as context (so a sealed value copied to another principal's row
// does not open) — sealTotpSecret and openTotpSecret are the one pair that
// both the enrolment here and the gateway's code check use.
import { openSecret, sealSecret } from '@rookery/pki';
import { RookeryError } from '@rookery/protocol';
import { generateSecret, generateURI } from 'otplib';
import type { ControlStore } from '../store/control-store.js';
import type { Principal } from '../store/types.js';
import { requirePrincipal } from './require.js';

/** The name authenticator apps show above the code. */
export const TOTP_ISSUER = 'Rookery';

export function sealTotpSecret(masterKey: Buffer, secret: string, principalId: string): string {
  return sealSecret(masterKey, secret, principalId);
}

export function openTotpSecret(masterKey: Buffer, sealed: string, principalId: string): string {
  return openSecret(masterKey, sealed, principalId);
}

export interface TotpEnrolment {
  principal: Principal;
  /** Base32; shown once, for people who type it instead of scanning. */
  secret: string;
  /** otpauth://totp/… for the QR code (SHA-1, 6 digits, 30 s: what every authenticator app reads). */
  uri: string;
}

/**
 * Gives a person a new authenticator secret. A person who already has one
 * keeps it (TwoFactorAlreadyEnrolled): replacing it silently would lock them
 * out; `resetTotp` first says that on purpose.
 */
export async function enrolTotp(
  store: ControlStore,
  masterKey: Buffer,
  input: { principalId: string },
): Promise<TotpEnrolment> {
  const principal = await personToEnrol(store, input.principalId);
  const secret = generateSecret();
  await store.setTotpSecret(principal.id, sealTotpSecret(masterKey, secret, principal.id));
  return { principal, secret, uri: otpauthUri(principal, secret) };
}

/**
 * Gives a person a new authenticator secret that only the person collects, once
 * (collectTotpEnrolment, through the gateway's POST /auth/enrolment with their own
 * certificate): the administrator who starts it never sees the secret. Same
 * refusals as enrolTotp.
 */
export async function startTotpEnrolment(
  store: ControlStore,
  masterKey: Buffer,
  input: { principalId: string },
): Promise<{ principal: Principal; pending: true }> {
  const principal = await personToEnrol(store, input.principalId);
  const sealed = sealTotpSecret(masterKey, generateSecret(), principal.id);
  await store.setTotpSecret(principal.id, sealed, { deliver: true });
  return { principal, pending: true };
}

/** Whether a started enrolment waits for the person to collect it. */
export function pendingTotpEnrolment(store: ControlStore, principalId: string): Promise<boolean> {
  return store.hasTotpDelivery(principalId);
}

/** The started enrolment of `principal`, answered once (null when none waits or it was collected). */
export async function collectTotpEnrolment(
  store: ControlStore,
  masterKey: Buffer,
  principal: Principal,
): Promise<TotpEnrolment | null> {
  const sealed = await store.takeTotpDelivery(principal.id);
  if (sealed === null) return null;
  const secret = openTotpSecret(masterKey, sealed, principal.id);
  return { principal, secret, uri: otpauthUri(principal, secret) };
}

async function personToEnrol(store: ControlStore, principalId: string): Promise<Principal> {
  const principal = await requirePrincipal(store, principalId);
  if (principal.kind !== 'person') {
    throw new RookeryError(
      'InvalidRequest',
      `"${principal.name}" is a program: programs sign in with their certificate alone; only people enrol an authenticator.`,
    );
  }
  if ((await store.getTotpSecret(principal.id)) !== null) {
    throw new RookeryError(
      'TwoFactorAlreadyEnrolled',
      `"${principal.name}" already has an authenticator; reset it first with \`rookery totp reset ${principal.id}\`.`,
    );
  }
  return principal;
}

function otpauthUri(principal: Principal, secret: string): string {
  const label = principal.tenantId ? `${principal.name}@${principal.tenantId}` : principal.name;
  return generateURI({ issuer: TOTP_ISSUER, label, secret });
}

/**
 * Removes a person's authenticator and ends their two-factor sessions (a lost
 * phone must not leave a session open). They enrol again with `enrolTotp`.
 */
export async function resetTotp(
  store: ControlStore,
  input: { principalId: string },
): Promise<{ principal: Principal; hadAuthenticator: boolean }> {
  const principal = await requirePrincipal(store, input.principalId);
  const hadAuthenticator = (await store.getTotpSecret(principal.id)) !== null;
  await store.clearTotpSecret(principal.id);
  await store.deleteTwoFactorSessions(principal.id);
  return { principal, hadAuthenticator };
}
