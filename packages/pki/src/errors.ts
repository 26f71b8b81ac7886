// Errors as values for the certificate authority and its crypto helpers. The codes are
// stable (callers branch on them, the gateway turns them into problem+json), in the style
// of @rookery/protocol's RookeryError, but kept here so protocol's closed code list does
// not have to know about PKI internals.
import type { Problem } from '@rookery/protocol';

export const PkiErrorCodes = {
  /** The peer certificate carries no (or an ambiguous) Rookery identity. */
  CertificateNotRecognised: 401,
  /** A sealed secret was tampered with, truncated, or opened with another key. */
  SealedSecretInvalid: 500,
  /** ca.crt / ca.key are missing their partner, unreadable, not a CA, mismatched or expired. */
  CertificateAuthorityInvalid: 500,
  /** The master key file (or a key passed in) is not exactly 32 bytes. */
  MasterKeyInvalid: 500,
  /** Options passed to an issue/create call are out of range (empty name, bad tenant id...). */
  InvalidCertificateRequest: 400,
  /** A certificate or key given as PEM/DER could not be read. */
  InvalidCertificate: 400,
} as const satisfies Record<string, number>;

export type PkiErrorCode = keyof typeof PkiErrorCodes;

const TITLES: Record<PkiErrorCode, string> = {
  CertificateNotRecognised: 'Certificate not recognised',
  SealedSecretInvalid: 'Sealed secret invalid',
  CertificateAuthorityInvalid: 'Certificate authority invalid',
  MasterKeyInvalid: 'Master key invalid',
  InvalidCertificateRequest: 'Invalid certificate request',
  InvalidCertificate: 'Invalid certificate',
};

/** An error with a stable code, an HTTP status and a message that says what to do. */
export class PkiError extends Error {
  readonly code: PkiErrorCode;
  readonly status: number;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: PkiErrorCode, message: string, details: Record<string, unknown> = {}, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'PkiError';
    this.code = code;
    this.status = PkiErrorCodes[code];
    this.details = details;
  }

  toProblem(): Problem {
    return {
      type: `https://rookery.dev/errors/${this.code}`,
      title: TITLES[this.code],
      status: this.status,
      detail: this.message,
      code: this.code,
      ...this.details,
    };
  }
}

export function isPkiError(value: unknown, code?: PkiErrorCode): value is PkiError {
  return value instanceof PkiError && (code === undefined || value.code === code);
}
