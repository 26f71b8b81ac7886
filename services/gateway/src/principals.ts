// Certificate → principal, cached. A TLS handshake proves the certificate was
// issued by our CA; this says whom it was issued to and whether it still
// counts. Revocations are polled from the control plane every second, so a
// revoked certificate stops working within about a second on every gateway
// (pollRevocations says what that takes of the revoking processes' clocks).
import type { CertificateRecord, ControlStore, Principal } from '@rookery/control-store';

export interface Resolved {
  principal: Principal;
  certificate: CertificateRecord;
}

export type Resolution =
  | { ok: true; resolved: Resolved }
  | {
      ok: false;
      code: 'CertificateNotRecognised' | 'CertificateRevoked' | 'CertificateExpired';
      message: string;
    };

/** How far behind the newest revocation seen a later one may be stamped and still arrive by the poll. */
export const REVOCATION_POLL_OVERLAP_MS = 5 * 60_000;

interface CacheEntry {
  resolved: Resolved | null;
  until: number;
}

export class PrincipalDirectory {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly revoked = new Set<string>();
  private revokedSince = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: ControlStore,
    private readonly options: { pollMs: number; cacheMs: number; now?: () => number },
  ) {}

  async start(): Promise<void> {
    await this.pollRevocations();
    this.timer = setInterval(() => {
      this.pollRevocations().catch(() => undefined); // the next poll retries; cached answers stay valid
    }, this.options.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async resolve(thumbprint: string): Promise<Resolution> {
    if (this.revoked.has(thumbprint)) {
      return {
        ok: false,
        code: 'CertificateRevoked',
        message: 'This certificate was revoked; ask an administrator for a new one.',
      };
    }
    const now = this.now();
    let entry = this.cache.get(thumbprint);
    if (!entry || entry.until < now) {
      entry = { resolved: await this.lookup(thumbprint), until: now + this.options.cacheMs };
      this.cache.set(thumbprint, entry);
    }
    const resolved = entry.resolved;
    if (!resolved) {
      return {
        ok: false,
        code: 'CertificateNotRecognised',
        message: 'This certificate is not registered with Rookery (was its principal deleted?).',
      };
    }
    if (resolved.certificate.revokedAt !== null) {
      return {
        ok: false,
        code: 'CertificateRevoked',
        message: 'This certificate was revoked; ask an administrator for a new one.',
      };
    }
    if (resolved.certificate.notAfter < now) {
      return {
        ok: false,
        code: 'CertificateExpired',
        message: 'This certificate has expired; download a new one.',
      };
    }
    return { ok: true, resolved };
  }

  private async lookup(thumbprint: string): Promise<Resolved | null> {
    const certificate = await this.store.getCertificateByThumbprint(thumbprint);
    if (!certificate) return null;
    const principal = await this.store.getPrincipal(certificate.principalId);
    return principal ? { principal, certificate } : null;
  }

  private async pollRevocations(): Promise<void> {
    // A revocation is stamped with the clock of the process that made it (any gateway's control API, the
    // CLI), and committed a moment later; polling from the newest stamp seen would miss one stamped earlier
    // by a clock behind another's, or committed late. Polls overlap by REVOCATION_POLL_OVERLAP_MS so that
    // such a revocation still arrives within a poll (the set ignores repeats); one stamped further behind
    // than that is refused once its certificate's cache entry expires (cacheMs).
    const since = Math.max(0, this.revokedSince - REVOCATION_POLL_OVERLAP_MS);
    const revoked = await this.store.listRevokedSince(since);
    for (const r of revoked) {
      this.revoked.add(r.thumbprint);
      this.cache.delete(r.thumbprint);
      this.revokedSince = Math.max(this.revokedSince, r.revokedAt);
    }
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}
