// For the tests of browsers' sessions and the console's files (browser-session.test.ts and
// adversarial/browser-sessions.adversarial.test.ts): a console build as Vite lays it out, and a person
// signed in the way the console signs in (a browser-bound session: its cookie and CSRF token).
import fs from 'node:fs';
import path from 'node:path';
import { makeTempDir } from '@rookery/testkit';
import { generate } from 'otplib';
import { afterAll, beforeAll, expect } from 'vitest';
import { type Client, type Stack, startStack } from './stack.js';

export const CONSOLE_SCRIPT = 'index-Ab12Cd34.js';

/** index.html and one hashed script under assets/, plus a file beside them that is not part of the build. */
export function consoleBuild(): ReturnType<typeof makeTempDir> {
  const build = makeTempDir('rookery-console-files-');
  fs.mkdirSync(path.join(build.dir, 'assets'));
  fs.writeFileSync(
    path.join(build.dir, 'index.html'),
    `<!doctype html><html><head><script type="module" src="/assets/${CONSOLE_SCRIPT}"></script></head><body></body></html>`,
  );
  fs.writeFileSync(path.join(build.dir, 'assets', CONSOLE_SCRIPT), 'console.log("console");');
  fs.writeFileSync(path.join(build.dir, 'secret.txt'), 'not an asset');
  return build;
}

/** A person of `tenantId` with a browser-bound two-factor session. */
export async function signedIn(
  stack: Stack,
  name: string,
  tenantId: string,
): Promise<{ client: Client; cookie: string; csrf: string }> {
  const { client, secret } = await stack.person(name, tenantId);
  const opened = await client.call('POST', '/auth/2fa', { code: await generate({ secret }), minutes: 10 });
  expect(opened.status).toBe(201);
  const cookie = String(opened.headers['set-cookie']).split(';')[0]!;
  expect(opened.json.CsrfToken).toMatch(/^[\w-]{43}$/);
  return { client, cookie, csrf: String(opened.json.CsrfToken) };
}

/**
 * A stack serving a console build, with tenant acme created and running (the tests' first writes are
 * not about waking it), for the file's tests; closed after them. Read `.stack` inside a test.
 */
export function useConsoleStack(): { readonly stack: Stack } {
  let stack: Stack | undefined;
  let files: ReturnType<typeof consoleBuild> | undefined;
  beforeAll(async () => {
    files = consoleBuild();
    stack = await startStack({ consoleDir: files.dir });
    await stack.store.createTenant({ id: 'acme', name: 'Acme' });
    await stack.running('acme');
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    files?.cleanup();
  });
  return {
    get stack(): Stack {
      if (stack === undefined) throw new Error('the console stack is not started yet');
      return stack;
    },
  };
}
