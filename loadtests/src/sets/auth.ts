// Auth: new TLS handshakes for every request, and people's TOTP sessions
// (k6/auth.js). One person per user, each with a certificate and an enrolled
// authenticator, reached through a host name of their own (k6 picks a client
// certificate by host name), all resolving to 127.0.0.1 and named on the
// gateway's server certificate. k6 cannot compute TOTP codes without an
// extension, so the runner computes each person's codes for every 30 s step
// of the run (otplib, the gateway's own library) and hands them over.
import { generate } from 'otplib';
import { type Person, personWithAuthenticator, withControlStore } from '../principals.js';
import type { ScenarioSetDefinition } from './types.js';

const DATABASE = 'auth';
const DOCUMENT_ID = 'probe/1';
const STEP_MS = 30_000;
/** The most people: each is a principal, a certificate and a server certificate name. */
export const MAX_PEOPLE = 200;

const hostOf = (i: number) => `person-${i}.loadtest.localhost`;

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
  stackEnv: (options) => ({
    ROOKERY_GATEWAY_NAMES: [
      'localhost',
      '127.0.0.1',
      '::1',
      ...Array.from({ length: Math.min(options.users, MAX_PEOPLE) }, (_, i) => hostOf(i + 1)),
    ].join(','),
  }),
  async prepare(stack, client, options) {
    if (options.users > MAX_PEOPLE)
      throw new Error(`auth runs at most ${MAX_PEOPLE} users (one person each)`);
    await client.expect('PUT', `/databases/${DATABASE}/docs?id=${DOCUMENT_ID}`, { Probe: true }, [201]);
    const people: Person[] = await withControlStore(stack, async (store) => {
      const made: Person[] = [];
      for (let i = 1; i <= options.users; i++)
        made.push(await personWithAuthenticator(stack, store, `person-${i}`));
      return made;
    });
    // Codes from a step before now (the clock may tick over) to well past the end of the run.
    const from = Date.now() - STEP_MS;
    const to = Date.now() + options.warmupMs + options.durationMs + 120_000;
    const persons = await Promise.all(
      people.map(async (p, i) => ({ host: hostOf(i + 1), codes: await codesFor(p.totpSecret, from, to) })),
    );
    return {
      config: { auth: { persons, database: DATABASE, documentId: DOCUMENT_ID, sessionMinutes: 1 } },
      tlsAuth: [
        { domains: ['localhost'], cert: stack.certFile, key: stack.keyFile },
        ...people.map((p, i) => ({ domains: [hostOf(i + 1)], cert: p.certFile, key: p.keyFile })),
      ],
      description: `${options.users} people with certificates and authenticators; every request a new TLS handshake`,
    };
  },
};
