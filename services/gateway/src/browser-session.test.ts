// A person's browser session through the real gateway over mutual TLS (stack.ts): the CSRF token that every
// state-changing call of a cookie session carries, the refusal of requests other sites' pages send, the
// session's description for the console, sign-out, and the console's files served at `/`.
import fs from 'node:fs';
import path from 'node:path';
import { makeTempDir } from '@rookery/testkit';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, type Stack, startStack } from './test-fixtures/stack.js';

let stack: Stack;
let consoleFiles: ReturnType<typeof makeTempDir>;
const SCRIPT = 'index-Ab12Cd34.js';

beforeAll(async () => {
  // A console build as Vite lays it out: index.html and hashed assets.
  consoleFiles = makeTempDir('rookery-console-files-');
  fs.mkdirSync(path.join(consoleFiles.dir, 'assets'));
  fs.writeFileSync(
    path.join(consoleFiles.dir, 'index.html'),
    `<!doctype html><html><head><script type="module" src="/assets/${SCRIPT}"></script></head><body></body></html>`,
  );
  fs.writeFileSync(path.join(consoleFiles.dir, 'assets', SCRIPT), 'console.log("console");');
  fs.writeFileSync(path.join(consoleFiles.dir, 'secret.txt'), 'not an asset');
  stack = await startStack({ consoleDir: consoleFiles.dir });
  await stack.store.createTenant({ id: 'acme', name: 'Acme' });
  // The tests' first writes are not about waking the tenant: it runs before they start.
  await stack.running('acme');
}, 120_000);
afterAll(async () => {
  await stack?.close();
  consoleFiles?.cleanup();
});

/** A person of acme signed in with a browser-bound session: its cookie and CSRF token. */
async function signedIn(name: string): Promise<{ client: Client; cookie: string; csrf: string }> {
  const { client, secret } = await stack.person(name, 'acme');
  const opened = await client.call('POST', '/auth/2fa', { code: await generate({ secret }), minutes: 10 });
  expect(opened.status).toBe(201);
  const cookie = String(opened.headers['set-cookie']).split(';')[0]!;
  expect(opened.json.CsrfToken).toMatch(/^[\w-]{43}$/);
  return { client, cookie, csrf: String(opened.json.CsrfToken) };
}

describe('CSRF protection of browser sessions', () => {
  it('refuses a state-changing call of a cookie session without its token, or with another one', async () => {
    const { client, cookie, csrf } = await signedIn('ada');
    const create = (headers: Record<string, string>) =>
      client.call('PUT', '/admin/databases', { Name: 'shop' }, { cookie, ...headers });

    const without = await create({});
    expect([without.status, without.json.code]).toEqual([403, 'CsrfTokenInvalid']);
    expect(without.json.detail).toContain('X-Rookery-Csrf');
    const other = await signedIn('grace');
    const wrong = await create({ 'x-rookery-csrf': other.csrf });
    expect([wrong.status, wrong.json.code]).toEqual([403, 'CsrfTokenInvalid']);
    // Nothing was created by the refused calls.
    const listed = await client.call('GET', '/databases', undefined, { cookie });
    expect(listed.status).toBe(200);
    expect(listed.text).not.toContain('shop');

    expect((await create({ 'x-rookery-csrf': csrf })).status).toBe(201);
    // Reads need no token.
    expect((await client.call('GET', '/databases', undefined, { cookie })).status).toBe(200);
  });

  it("refuses state-changing requests that another site's page sent, whatever the session", async () => {
    const { client, cookie, csrf } = await signedIn('linus');
    const put = (headers: Record<string, string>) =>
      client.call(
        'PUT',
        '/admin/databases',
        { Name: 'elsewhere' },
        { cookie, 'x-rookery-csrf': csrf, ...headers },
      );
    const siteHeaders: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ];
    for (const headers of siteHeaders) {
      const refused = await put(headers);
      expect([refused.status, refused.json.code], JSON.stringify(headers)).toEqual([403, 'CrossSiteRequest']);
    }
    // A program's certificate imported in a browser: no cookie, still refused from another site.
    const program = await stack.program('etl', 'acme');
    const viaProgram = await program.call(
      'PUT',
      '/admin/databases',
      { Name: 'elsewhere' },
      { origin: 'https://evil.example' },
    );
    expect([viaProgram.status, viaProgram.json.code]).toEqual([403, 'CrossSiteRequest']);
    // Signing in from another site's page is refused too (a login CSRF).
    const { client: other, secret } = await stack.person('mallory-target', 'acme');
    const login = await other.call(
      'POST',
      '/auth/2fa',
      { code: await generate({ secret }) },
      { origin: 'https://evil.example' },
    );
    expect([login.status, login.json.code]).toEqual([403, 'CrossSiteRequest']);
    // The gateway's own origin and the browser's own navigation pass.
    const origin = new URL(stack.gateway.url).origin;
    expect((await put({ origin, 'sec-fetch-site': 'same-origin' })).status).toBe(201);
  });
});

describe('the session, for the console', () => {
  it('describes who is signed in, with the CSRF token, and ends at sign-out', async () => {
    const { client, cookie, csrf } = await signedIn('barbara');
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
    const { client, secret } = await stack.person('edsger', 'acme');
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
    const program = await stack.program('viewer', 'acme');
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

    // Only the files of the build, by exact name: no other file, no way out of the folder.
    for (const probe of [
      '/assets/missing.js',
      '/secret.txt',
      '/assets/../secret.txt',
      '/assets/%2e%2e/secret.txt',
    ]) {
      const refused = await program.call('GET', probe);
      expect([refused.status, refused.json.code], probe).toEqual([404, 'RouteNotFound']);
    }
    const posted = await program.call('POST', '/', {});
    expect([posted.status, posted.json.code]).toEqual([404, 'RouteNotFound']);
  });

  it('is served before a two-factor session: the sign-in page itself', async () => {
    const { client } = await stack.person('hedy', 'acme');
    expect((await client.call('GET', '/')).status).toBe(200);
    expect((await client.call('GET', '/databases')).json.code).toBe('TwoFactorRequired');
  });
});
