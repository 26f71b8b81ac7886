// The control store's second-factor state, for both dialects: people's sealed
// TOTP secrets, the time steps already used, the attempts counted against a
// lockout, and the sessions a code opened. KyselyControlStore hands these
// methods out as its own; every write that must hold across gateways is one
// atomic statement, never a read and a later write.
import { RookeryError } from '@rookery/protocol';
import type { Kysely, Selectable } from 'kysely';
import { z } from 'zod';
import { parseInput as parse } from '../input.js';
import type { ControlSchema, TwoFactorSessionsTable } from './schema.js';
import { bigint, brokenConstraint, corrupt, principalNotFound, Time, text } from './sql.js';
import {
  type TwoFactorAttempt,
  type TwoFactorAttemptLimit,
  TwoFactorAttemptLimitSchema,
  type TwoFactorSession,
  TwoFactorSessionSchema,
} from './types.js';

/** Claimed TOTP steps kept per principal behind the newest one (30 s each: 10 minutes). */
export const TOTP_STEPS_KEPT = 20;

function toSession(row: Selectable<TwoFactorSessionsTable>): TwoFactorSession {
  const binding = row.binding === 'browser' || row.binding === 'certificate' ? row.binding : null;
  if (binding === null) throw corrupt('two-factor session binding', row.principal_id, row.binding);
  return {
    tokenHash: row.token_hash,
    principalId: row.principal_id,
    thumbprint: row.thumbprint,
    binding,
    expiresAt: row.expires_at,
  };
}

export class TwoFactorRecords {
  constructor(
    private readonly db: Kysely<ControlSchema>,
    private readonly now: () => number,
  ) {}

  // ── TOTP secrets and used steps ─────────────────────────────────────────

  async setTotpSecret(
    principalId: string,
    sealed: string,
    options: { deliver?: boolean } = {},
  ): Promise<void> {
    const secret = parse(z.string().min(1), sealed, 'sealed TOTP secret');
    const now = this.now();
    const row = {
      principal_id: principalId,
      sealed: secret,
      updated_at: now,
      delivery_pending_since: options.deliver === true ? now : null,
    };
    try {
      await this.db
        .insertInto('totp_secrets')
        .values(row)
        .onConflict((oc) =>
          oc.column('principal_id').doUpdateSet({
            sealed: row.sealed,
            updated_at: row.updated_at,
            delivery_pending_since: row.delivery_pending_since,
          }),
        )
        .execute();
    } catch (error) {
      if (brokenConstraint(error) === 'foreign-key') throw principalNotFound(principalId);
      throw error;
    }
  }

  async getTotpSecret(principalId: string): Promise<string | null> {
    const row = await this.db
      .selectFrom('totp_secrets')
      .select('sealed')
      .where('principal_id', '=', principalId)
      .executeTakeFirst();
    return row?.sealed ?? null;
  }

  async hasTotpDelivery(principalId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('totp_secrets')
      .select('principal_id')
      .where('principal_id', '=', principalId)
      .where('delivery_pending_since', 'is not', null)
      .executeTakeFirst();
    return row !== undefined;
  }

  async takeTotpDelivery(principalId: string): Promise<string | null> {
    // One statement: of two gateways (or two tabs) collecting at once, exactly one gets the secret.
    const row = await this.db
      .updateTable('totp_secrets')
      .set({ delivery_pending_since: null })
      .where('principal_id', '=', principalId)
      .where('delivery_pending_since', 'is not', null)
      .returning('sealed')
      .executeTakeFirst();
    return row?.sealed ?? null;
  }

  async clearTotpSecret(principalId: string): Promise<void> {
    const deleted = await this.db
      .deleteFrom('totp_secrets')
      .where('principal_id', '=', principalId)
      .executeTakeFirst();
    if (Number(deleted.numDeletedRows) > 0) return;
    const principal = await this.db
      .selectFrom('principals')
      .select('id')
      .where('id', '=', principalId)
      .executeTakeFirst();
    if (!principal) throw principalNotFound(principalId);
  }

  async claimTotpStep(principalId: string, step: number): Promise<boolean> {
    const s = parse(Time, step, 'TOTP time step');
    let inserted: bigint | number;
    try {
      // One statement: insert unless this step was claimed (the primary key
      // makes concurrent claims race to exactly one winner) or is older than
      // the steps still kept.
      const result = await this.db
        .insertInto('totp_steps')
        .columns(['principal_id', 'step', 'claimed_at'])
        .expression(
          this.db
            .selectNoFrom([
              text(principalId).as('principal_id'),
              bigint(s).as('step'),
              bigint(this.now()).as('claimed_at'),
            ])
            .where(({ not, exists, selectFrom }) =>
              not(
                exists(
                  selectFrom('totp_steps')
                    .select('step')
                    .where('principal_id', '=', principalId)
                    .where('step', '>=', s + TOTP_STEPS_KEPT),
                ),
              ),
            ),
        )
        .onConflict((oc) => oc.columns(['principal_id', 'step']).doNothing())
        .executeTakeFirst();
      inserted = result.numInsertedOrUpdatedRows ?? 0;
    } catch (error) {
      if (brokenConstraint(error) === 'foreign-key') throw principalNotFound(principalId);
      throw error;
    }
    if (Number(inserted) === 0) return false;
    await this.db
      .deleteFrom('totp_steps')
      .where('principal_id', '=', principalId)
      .where('step', '<', s - TOTP_STEPS_KEPT)
      .execute();
    return true;
  }

  // ── attempts (the lockout) ──────────────────────────────────────────────

  async takeTwoFactorAttempt(
    principalId: string,
    limit: TwoFactorAttemptLimit,
    now: number,
  ): Promise<TwoFactorAttempt> {
    const { maxAttempts, windowMs } = parse(TwoFactorAttemptLimitSchema, limit, 'two-factor attempt limit');
    const at = parse(Time, now, 'attempt time');
    /** A window that started at or before this has ended. */
    const ended = at - windowMs;
    let taken: { attempts: number } | undefined;
    try {
      // One statement, so the count cannot be read by one attempt and
      // overwritten by another: the first attempt inserts the row; later ones
      // add 1, or open a new window once the last one ended, and only while the
      // window has attempts left (the WHERE of DO UPDATE). SQLite runs it under
      // the file's write lock; PostgreSQL locks the row for ON CONFLICT DO
      // UPDATE and evaluates the WHERE on the newest version, so concurrent
      // attempts from any number of gateways take their turns on one count.
      taken = await this.db
        .insertInto('two_factor_attempts')
        .values({ principal_id: principalId, window_started_at: at, attempts: 1 })
        .onConflict((oc) =>
          oc
            .column('principal_id')
            .doUpdateSet((eb) => {
              const over = eb('two_factor_attempts.window_started_at', '<=', ended);
              return {
                window_started_at: eb
                  .case()
                  .when(over)
                  .then(bigint(at))
                  .else(eb.ref('two_factor_attempts.window_started_at'))
                  .end(),
                attempts: eb
                  .case()
                  .when(over)
                  .then(bigint(1))
                  .else(eb('two_factor_attempts.attempts', '+', bigint(1)))
                  .end(),
              };
            })
            .where((eb) =>
              eb.or([
                eb('two_factor_attempts.window_started_at', '<=', ended),
                eb('two_factor_attempts.attempts', '<', maxAttempts),
              ]),
            ),
        )
        .returning('attempts')
        .executeTakeFirst();
    } catch (error) {
      if (brokenConstraint(error) === 'foreign-key') throw principalNotFound(principalId);
      throw error;
    }
    if (taken) return { allowed: true, attempts: Number(taken.attempts) };
    const window = await this.db
      .selectFrom('two_factor_attempts')
      .select('window_started_at')
      .where('principal_id', '=', principalId)
      .executeTakeFirst();
    // No row: a code opened a session in between and cleared the count; try again at once.
    return { allowed: false, retryAt: window ? window.window_started_at + windowMs : at };
  }

  async clearTwoFactorAttempts(principalId: string): Promise<void> {
    await this.db.deleteFrom('two_factor_attempts').where('principal_id', '=', principalId).execute();
  }

  // ── sessions ─────────────────────────────────────────────────────────────

  async createTwoFactorSession(session: TwoFactorSession): Promise<void> {
    const s = parse(TwoFactorSessionSchema, session, 'two-factor session');
    try {
      await this.db
        .insertInto('two_factor_sessions')
        .values({
          token_hash: s.tokenHash,
          principal_id: s.principalId,
          thumbprint: s.thumbprint,
          binding: s.binding,
          expires_at: s.expiresAt,
        })
        .execute();
    } catch (error) {
      const broken = brokenConstraint(error);
      if (broken === 'foreign-key') throw principalNotFound(s.principalId);
      if (broken === 'unique')
        throw new RookeryError('InvalidRequest', 'That session token is already in use.');
      throw error;
    }
    // Sessions that ended are of no use to anyone: drop them while we are here.
    await this.db.deleteFrom('two_factor_sessions').where('expires_at', '<=', this.now()).execute();
  }

  async findTwoFactorSession(tokenHash: string): Promise<TwoFactorSession | null> {
    const row = await this.db
      .selectFrom('two_factor_sessions')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
    return row ? toSession(row) : null;
  }

  async findCertificateSession(thumbprint: string, now: number): Promise<TwoFactorSession | null> {
    const row = await this.db
      .selectFrom('two_factor_sessions')
      .selectAll()
      .where('thumbprint', '=', thumbprint)
      .where('binding', '=', 'certificate')
      .where('expires_at', '>', now)
      .orderBy('expires_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? toSession(row) : null;
  }

  async deleteTwoFactorSession(tokenHash: string): Promise<void> {
    await this.db.deleteFrom('two_factor_sessions').where('token_hash', '=', tokenHash).execute();
  }

  async deleteTwoFactorSessions(principalId: string): Promise<void> {
    await this.db.deleteFrom('two_factor_sessions').where('principal_id', '=', principalId).execute();
  }
}
