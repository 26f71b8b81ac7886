// Attacks on people's second factor, end to end through the real gateway over mutual TLS: guessing
// codes (one by one, in bursts, through two gateways at once) and replaying a code that worked. The
// attempts are counted in the control store, one atomic statement per attempt, so neither a burst
// nor a second gateway gets more guesses than the limit (README.md beside this file).
import { generate } from 'otplib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forkGateway, type GatewayProcess } from '../test-fixtures/gateway-process.js';
import { type Client, type Reply, type Stack, startStack } from '../test-fixtures/stack.js';

/** The gateway's defaults (ROOKERY_GATEWAY_TWO_FACTOR_MAX_ATTEMPTS, …_WINDOW_SECONDS). */
const MAX_ATTEMPTS = 5;
const WINDOW_MS = 5 * 60_000;
const BURST = 50;

let stack: Stack;
let second: GatewayProcess;

beforeAll(async () => {
  stack = await startStack();
  await stack.store.createTenant({ id: 'acme', name: 'Acme' });
  // A second gateway process on the same data directory: another gateway behind the load balancer.
  second = await forkGateway(stack);
}, 120_000);
afterAll(async () => {
  await second?.stop();
  await stack?.close();
});

/** Six-digit codes that no authenticator with this secret shows within two minutes of now. */
async function wrongCodes(secret: string, count: number): Promise<string[]> {
  const now = Math.floor(Date.now() / 1000);
  const valid = new Set<string>();
  for (let t = now - 120; t <= now + 120; t += 30) valid.add(await generate({ secret, epoch: t }));
  const codes: string[] = [];
  for (let n = 100_000; codes.length < count; n += 7919) {
    const code = String(n % 1_000_000).padStart(6, '0');
    if (!valid.has(code)) codes.push(code);
  }
  return codes;
}

/** POST /auth/2fa through the second gateway, with the same client certificate. */
async function viaSecond(client: Client, body: unknown): Promise<Reply> {
  const response = await request(`${second.url}/auth/2fa`, {
    method: 'POST',
    dispatcher: client.agent,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, json: JSON.parse(text), text };
}

function tally(replies: Reply[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of replies) {
    const key = `${r.status} ${String(r.json.code)}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

describe('two-factor codes: guessing', () => {
  it('locks a person out after the configured number of wrong codes, one by one', async () => {
    const { client, secret } = await stack.person('mallory', 'acme');
    const codes: unknown[] = [];
    for (const code of await wrongCodes(secret, MAX_ATTEMPTS + 2))
      codes.push((await client.call('POST', '/auth/2fa', { code })).json.code);
    expect(codes).toEqual([
      ...Array(MAX_ATTEMPTS).fill('InvalidTwoFactorCode'),
      'TooManyTwoFactorAttempts',
      'TooManyTwoFactorAttempts',
    ]);
  });

  it(`lets exactly ${MAX_ATTEMPTS} of ${BURST} wrong codes sent at once be tried; the right code is then refused too until the window ends`, async () => {
    const { client, secret } = await stack.person('burst', 'acme');
    const replies = await Promise.all(
      (await wrongCodes(secret, BURST)).map((code) => client.call('POST', '/auth/2fa', { code })),
    );
    expect(tally(replies)).toEqual({
      '401 InvalidTwoFactorCode': MAX_ATTEMPTS,
      '429 TooManyTwoFactorAttempts': BURST - MAX_ATTEMPTS,
    });
    const refused = replies.find((r) => r.status === 429)!;
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000);
    expect(refused.json.detail).toMatch(/try again in \d+ s/);

    // Locked out means locked out: guessing right now would be a brute force that paid off.
    const right = await client.call('POST', '/auth/2fa', { code: await generate({ secret }) });
    expect([right.status, right.json.code]).toEqual([429, 'TooManyTwoFactorAttempts']);

    // After the window the person gets in with the right code, and a success starts the count again.
    stack.clock.now = Date.now() + WINDOW_MS + 1_000;
    try {
      const code = await generate({ secret, epoch: Math.floor(stack.clock.now / 1000) });
      const opened = await client.call('POST', '/auth/2fa', { code, binding: 'certificate' });
      expect(opened.status).toBe(201);
    } finally {
      stack.clock.now = null;
    }
  });

  it(`lets exactly ${MAX_ATTEMPTS} of ${BURST} wrong codes be tried when the burst is split across two gateways`, async () => {
    const { client, secret } = await stack.person('two-doors', 'acme');
    const replies = await Promise.all(
      (await wrongCodes(secret, BURST)).map((code, i) =>
        i % 2 === 0 ? client.call('POST', '/auth/2fa', { code }) : viaSecond(client, { code }),
      ),
    );
    expect(tally(replies)).toEqual({
      '401 InvalidTwoFactorCode': MAX_ATTEMPTS,
      '429 TooManyTwoFactorAttempts': BURST - MAX_ATTEMPTS,
    });
    // Each gateway refuses the next guess: the count is the store's, not a gateway's.
    const [a, b] = await wrongCodes(secret, 2);
    expect((await client.call('POST', '/auth/2fa', { code: a })).json.code).toBe('TooManyTwoFactorAttempts');
    expect((await viaSecond(client, { code: b })).json.code).toBe('TooManyTwoFactorAttempts');
  });
});

describe('two-factor codes: replay', () => {
  it('refuses a code that already opened a session, through the same gateway and through another', async () => {
    const { client, secret } = await stack.person('replayed', 'acme');
    const code = await generate({ secret });
    const opened = await client.call('POST', '/auth/2fa', { code, binding: 'browser' });
    expect(opened.status).toBe(201);
    const again = await client.call('POST', '/auth/2fa', { code, binding: 'certificate' });
    expect([again.status, again.json.code]).toEqual([401, 'TwoFactorCodeReused']);
    const elsewhere = await viaSecond(client, { code, binding: 'certificate' });
    expect([elsewhere.status, elsewhere.json.code]).toEqual([401, 'TwoFactorCodeReused']);
    // The replays opened nothing: the certificate alone still has no session.
    expect((await client.call('GET', '/databases')).json.code).toBe('TwoFactorRequired');
  });

  it('opens one session from one code sent to both gateways at once', async () => {
    const { client, secret } = await stack.person('raced', 'acme');
    const code = await generate({ secret });
    // As many copies as the attempts allowed: a replay is an attempt too, so more would also see 429s.
    const replies = await Promise.all(
      Array.from({ length: MAX_ATTEMPTS }, (_, i) =>
        i % 2 === 0
          ? client.call('POST', '/auth/2fa', { code, binding: 'certificate' })
          : viaSecond(client, { code, binding: 'certificate' }),
      ),
    );
    expect(tally(replies)).toEqual({
      '201 undefined': 1,
      '401 TwoFactorCodeReused': MAX_ATTEMPTS - 1,
    });
  });
});
