// People's certificates need a second factor: a TOTP code opens a session for
// a chosen duration, bound to the browser (a cookie) or to the certificate
// itself (any client holding it). Codes are single-use (the control plane
// records each accepted time step) and attempts are limited: each code checked
// takes an attempt from the control store first, so the limit holds for a burst
// of requests and for every gateway together.
import crypto from 'node:crypto';
import {
  type ControlStore,
  collectTotpEnrolment,
  openTotpSecret,
  type Principal,
  pendingTotpEnrolment,
  type TwoFactorAttemptLimit,
  type TwoFactorSession,
} from '@rookery/control-store';
import { verify } from 'otplib';

export const SESSION_COOKIE = 'rookery_2fa';
const PERIOD_SECONDS = 30;
/** One period either side: a phone's clock a little off still works. */
const TOLERANCE_SECONDS = 30;
/** 5 codes per 5 minutes: a person mistyping gets through, a guesser gets 1 in 200,000 per window. */
export const DEFAULT_TWO_FACTOR_LIMIT: Readonly<TwoFactorAttemptLimit> = Object.freeze({
  maxAttempts: 5,
  windowMs: 5 * 60_000,
});

export interface TwoFactorOptions {
  /** Every gateway on one control store should use the same limit: they share the count. */
  limit?: TwoFactorAttemptLimit;
  now?: () => number;
}

export type Binding = 'browser' | 'certificate';

export type OpenOutcome =
  | { ok: true; session: TwoFactorSession; cookieToken: string | null }
  | {
      ok: false;
      status: 400 | 401 | 429;
      code:
        | 'TwoFactorNotEnrolled'
        | 'InvalidTwoFactorCode'
        | 'TwoFactorCodeReused'
        | 'TooManyTwoFactorAttempts';
      message: string;
      retryAfterSeconds?: number;
    };

export function hashToken(token: string): string {
  return crypto.createHash('sha256').update(token).digest('hex');
}

export class TwoFactor {
  private readonly limit: TwoFactorAttemptLimit;
  private readonly now: () => number;

  constructor(
    private readonly store: ControlStore,
    private readonly masterKey: Buffer,
    options: TwoFactorOptions = {},
  ) {
    this.limit = options.limit ?? DEFAULT_TWO_FACTOR_LIMIT;
    this.now = options.now ?? Date.now;
  }

  /** A live session for this request, from its cookie or its certificate; null if there is none. */
  async sessionFor(thumbprint: string, cookieHeader: string | undefined): Promise<TwoFactorSession | null> {
    const now = this.now();
    const token = cookieValue(cookieHeader, SESSION_COOKIE);
    if (token) {
      const session = await this.store.findTwoFactorSession(hashToken(token));
      // A cookie only counts with the certificate it was opened with.
      if (session && session.thumbprint === thumbprint && session.expiresAt > now) return session;
    }
    return this.store.findCertificateSession(thumbprint, now);
  }

  /** Whether an enrolment a tenant admin started waits for this person to collect it. */
  hasEnrolmentToCollect(principal: Principal): Promise<boolean> {
    return pendingTotpEnrolment(this.store, principal.id);
  }

  /**
   * The enrolment a tenant admin started for this person (secret and otpauth URI), answered once across
   * every gateway (the store takes it in one statement); null when none waits.
   */
  async collectEnrolment(principal: Principal): Promise<{ secret: string; uri: string } | null> {
    const enrolment = await collectTotpEnrolment(this.store, this.masterKey, principal);
    return enrolment && { secret: enrolment.secret, uri: enrolment.uri };
  }

  async open(
    principal: Principal,
    thumbprint: string,
    request: { code: string; minutes: number; binding: Binding },
  ): Promise<OpenOutcome> {
    const now = this.now();
    const sealed = await this.store.getTotpSecret(principal.id);
    if (!sealed) {
      return {
        ok: false,
        status: 400,
        code: 'TwoFactorNotEnrolled',
        message:
          'This person has no authenticator enrolled; an administrator enrols one with `rookery totp enrol`.',
      };
    }
    // Taken before the code is checked, in one atomic statement of the store: an attempt
    // counted only after the check would let every request of a burst (and every gateway)
    // pass the check on the same old count. A replayed code counts too; a right one clears it.
    const attempt = await this.store.takeTwoFactorAttempt(principal.id, this.limit, now);
    if (!attempt.allowed) {
      const retryAfterSeconds = Math.max(1, Math.ceil((attempt.retryAt - now) / 1000));
      return {
        ok: false,
        status: 429,
        code: 'TooManyTwoFactorAttempts',
        message: `Too many codes tried (at most ${this.limit.maxAttempts} in ${Math.round(this.limit.windowMs / 1000)} s); try again in ${retryAfterSeconds} s.`,
        retryAfterSeconds,
      };
    }
    const epochSeconds = Math.floor(now / 1000);
    const result = await verify({
      secret: openTotpSecret(this.masterKey, sealed, principal.id),
      token: request.code,
      epoch: epochSeconds,
      epochTolerance: TOLERANCE_SECONDS,
    });
    if (!result.valid) {
      return {
        ok: false,
        status: 401,
        code: 'InvalidTwoFactorCode',
        message: 'That code is not valid now; enter the current code from your authenticator.',
      };
    }
    // The matched time step, recorded once: the same code cannot open a second session.
    const step =
      'timeStep' in result && typeof result.timeStep === 'number'
        ? result.timeStep
        : Math.floor(epochSeconds / PERIOD_SECONDS) + result.delta;
    if (!(await this.store.claimTotpStep(principal.id, step))) {
      return {
        ok: false,
        status: 401,
        code: 'TwoFactorCodeReused',
        message: 'That code was already used; wait for the next one.',
      };
    }
    await this.store.clearTwoFactorAttempts(principal.id);
    const token = crypto.randomBytes(32).toString('base64url');
    const session: TwoFactorSession = {
      tokenHash: hashToken(token),
      principalId: principal.id,
      thumbprint,
      binding: request.binding,
      expiresAt: now + request.minutes * 60_000,
    };
    await this.store.createTwoFactorSession(session);
    return { ok: true, session, cookieToken: request.binding === 'browser' ? token : null };
  }
}

/** A cookie's value from a Cookie header; null when it has none of that name. */
export function cookieValue(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}
