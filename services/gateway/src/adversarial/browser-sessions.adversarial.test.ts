// Attacks on people's browser sessions and on the console's files, end to end through the real gateway over
// mutual TLS: a browser presents the person's certificate (and the session cookie) to any page that asks, so
// another site's page must not be able to change anything with them (browser-session.ts), and a path must
// not reach a file outside the console's build (console-files.ts). README.md beside this file lists them.
import { generate } from 'otplib';
import { describe, expect, it } from 'vitest';
import { signedIn, useConsoleStack } from '../test-fixtures/browser-sessions.js';
import { openThroughGateway } from '../test-fixtures/websocket.js';

const served = useConsoleStack();

describe('CSRF protection of browser sessions', () => {
  it('refuses a state-changing call of a cookie session without its token, or with another one', async () => {
    const { client, cookie, csrf } = await signedIn(served.stack, 'ada', 'acme');
    const create = (headers: Record<string, string>) =>
      client.call('PUT', '/admin/databases', { Name: 'shop' }, { cookie, ...headers });

    const without = await create({});
    expect([without.status, without.json.code]).toEqual([403, 'CsrfTokenInvalid']);
    expect(without.json.detail).toContain('X-Rookery-Csrf');
    const other = await signedIn(served.stack, 'grace', 'acme');
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
    const { client, cookie, csrf } = await signedIn(served.stack, 'linus', 'acme');
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
    const program = await served.stack.program('etl', 'acme');
    const viaProgram = await program.call(
      'PUT',
      '/admin/databases',
      { Name: 'elsewhere' },
      { origin: 'https://evil.example' },
    );
    expect([viaProgram.status, viaProgram.json.code]).toEqual([403, 'CrossSiteRequest']);
    // Signing in from another site's page is refused too (a login CSRF).
    const { client: other, secret } = await served.stack.person('mallory-target', 'acme');
    const login = await other.call(
      'POST',
      '/auth/2fa',
      { code: await generate({ secret }) },
      { origin: 'https://evil.example' },
    );
    expect([login.status, login.json.code]).toEqual([403, 'CrossSiteRequest']);
    // The gateway's own origin and the browser's own navigation pass.
    const origin = new URL(served.stack.gateway.url).origin;
    expect((await put({ origin, 'sec-fetch-site': 'same-origin' })).status).toBe(201);
  });
});

describe('WebSockets opened by pages of other sites', () => {
  it("refuses another site's page the changes feed, which would let it read the data (cross-site WebSocket hijacking)", async () => {
    const program = await served.stack.program('feed-reader', 'acme');
    expect((await program.call('PUT', '/admin/databases', { Name: 'feeds' })).status).toBe(201);
    const path = '/databases/feeds/changes';
    // A WebSocket is not held to the same-origin policy: the browser opens it for any page, with the
    // certificate, and the page reads every frame. Browsers always send the page's Origin.
    for (const origin of ['https://evil.example', 'null']) {
      const opened = await openThroughGateway(
        served.stack.gateway.url,
        served.stack.ca.certPem,
        program,
        path,
        { origin },
      );
      expect(opened.kind === 'refused' && [opened.status, opened.json.code], origin).toEqual([
        403,
        'CrossSiteRequest',
      ]);
    }
    // The console's own origin and programs (no Origin) open it.
    const own = await openThroughGateway(served.stack.gateway.url, served.stack.ca.certPem, program, path, {
      origin: new URL(served.stack.gateway.url).origin,
    });
    expect(own.kind).toBe('open');
    if (own.kind === 'open') own.ws.close();
    const plain = await openThroughGateway(served.stack.gateway.url, served.stack.ca.certPem, program, path);
    expect(plain.kind).toBe('open');
    if (plain.kind === 'open') plain.ws.close();
  });
});

describe("the console's files", () => {
  it('answers only the files of the build, by exact name', async () => {
    const program = await served.stack.program('prober', 'acme');
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
  });
});
