// A person's browser session through the real gateway over mutual TLS (stack.ts): the session's description
// for the console (with its CSRF token), sign-out, and the console's files served at `/`. The attacks on
// them (CSRF, other sites' pages, paths out of the build) are in adversarial/browser-sessions.adversarial.test.ts.
import { generate } from 'otplib';
import { describe, expect, it } from 'vitest';
import { CONSOLE_SCRIPT as SCRIPT, signedIn, useConsoleStack } from './test-fixtures/browser-sessions.js';

const served = useConsoleStack();

describe('the session, for the console', () => {
  it('describes who is signed in, with the CSRF token, and ends at sign-out', async () => {
    const { client, cookie, csrf } = await signedIn(served.stack, 'barbara', 'acme');
    const described = await client.call('GET', '/auth/session', undefined, { cookie });
    expect(described.status).toBe(200);
    expect(described.json).toMatchObject({
      Principal: { Name: 'barbara', Kind: 'person', TenantId: 'acme', Role: { kind: 'tenant-admin' } },
      Binding: 'browser',
      CsrfToken: csrf,
    });
    expect(Date.parse(String(described.json.ExpiresAt))).toBeGreaterThan(Date.now());

    const noToken = await client.call('POST', '/auth/sign-out', undefined, { cookie });
    expect([noToken.status, noToken.json.code]).toEqual([403, 'CsrfTokenInvalid']);
    const out = await client.call('POST', '/auth/sign-out', undefined, { cookie, 'x-rookery-csrf': csrf });
    expect(out.status).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^rookery_2fa=; .*Max-Age=0/);
    // The session is gone from the store: the old cookie opens nothing.
    const after = await client.call('GET', '/auth/session', undefined, { cookie });
    expect([after.status, after.json.code]).toEqual([401, 'TwoFactorRequired']);
  });

  it('signs out only the browser: a certificate-bound session of the same person stays open', async () => {
    const { client, secret } = await served.stack.person('edsger', 'acme');
    const first = await client.call('POST', '/auth/2fa', {
      code: await generate({ secret, epoch: Math.floor(Date.now() / 1000) - 30 }),
      binding: 'certificate',
    });
    expect(first.status).toBe(201);
    const browser = await client.call('POST', '/auth/2fa', { code: await generate({ secret }) });
    expect(browser.status).toBe(201);
    const cookie = String(browser.headers['set-cookie']).split(';')[0]!;
    const out = await client.call('POST', '/auth/sign-out', undefined, {
      cookie,
      'x-rookery-csrf': String(browser.json.CsrfToken),
    });
    expect(out.status).toBe(204);
    const described = await client.call('GET', '/auth/session');
    expect(described.json).toMatchObject({ Binding: 'certificate', CsrfToken: null });
  });
});

describe('the console at /', () => {
  it('serves index.html with a strict policy, and hashed assets as immutable', async () => {
    const program = await served.stack.program('viewer', 'acme');
    const page = await program.call('GET', '/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
    const policy = String(page.headers['content-security-policy']);
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toContain('unsafe-inline');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.text).toContain(SCRIPT);

    const script = await program.call('GET', `/assets/${SCRIPT}`);
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(script.text).toBe('console.log("console");');
    const head = await program.call('HEAD', `/assets/${SCRIPT}`);
    expect([head.status, head.text]).toEqual([200, '']);

    const posted = await program.call('POST', '/', {});
    expect([posted.status, posted.json.code]).toEqual([404, 'RouteNotFound']);
  });

  it('is served before a two-factor session: the sign-in page itself', async () => {
    const { client } = await served.stack.person('hedy', 'acme');
    expect((await client.call('GET', '/')).status).toBe(200);
    expect((await client.call('GET', '/databases')).json.code).toBe('TwoFactorRequired');
  });
});
