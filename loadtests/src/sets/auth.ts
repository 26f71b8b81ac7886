// Auth: a TLS handshake with a client certificate for every request, and a
// person's TOTP sessions (k6/auth.js). The certificate is a person's with an
// enrolled authenticator. k6 cannot compute TOTP codes without an extension,
// so the runner computes the person's code for every 30 s step of the run
// (otplib, the gateway's own library) and hands them over, as a person reads
// them off their phone.
import { generate } from 'otplib';
import { personWithAuthenticator } from '../principals.js';
import { withControlStore } from '../stack.js';
import type { ScenarioSetDefinition } from './types.js';

const DATABASE = 'auth';
const DOCUMENT_ID = 'probe/1';
const STEP_MS = 30_000;

/** TOTP codes of `secret` for every 30 s step from `fromMs` to `toMs`, by step number. */
export async function codesFor(
  secret: string,
  fromMs: number,
  toMs: number,
): Promise<Record<number, string>> {
  const codes: Record<number, string> = {};
  for (let step = Math.floor(fromMs / STEP_MS); step <= Math.floor(toMs / STEP_MS); step++) {
    codes[step] = await generate({ secret, epoch: step * 30 });
  }
  return codes;
}

export const authSet: ScenarioSetDefinition = {
  script: 'auth.js',
  database: DATABASE,
  async prepare(stack, client, options) {
    await client.expect('PUT', `/databases/${DATABASE}/docs?id=${DOCUMENT_ID}`, { Probe: true }, [201]);
    const person = await withControlStore(stack.dataDir, (store) =>
      personWithAuthenticator(stack, store, 'ada'),
    );
    // From a step before now (the clock may tick over) to well past the end of the run.
    const codes = await codesFor(
      person.totpSecret,
      Date.now() - STEP_MS,
      Date.now() + options.warmupMs + options.durationMs + 120_000,
    );
    return {
      config: { auth: { codes, database: DATABASE, documentId: DOCUMENT_ID, sessionMinutes: 1 } },
      tlsAuth: { cert: person.certFile, key: person.keyFile },
      description: `a person's certificate with an authenticator; every request a new TLS handshake; one-minute sessions`,
    };
  },
};
