// What every console e2e file does: its set-up (consoleE2e: the stack, acme's admin, `shop`, Chromium),
// sign in with the keyboard alone, screenshots, the Content-Security-Policy watch, and axe-core's
// accessibility check.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Client, type Stack, startStack } from '@rookery/gateway/testing';
import { generate } from 'otplib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { launchChromium, personContext } from './browser.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const DIST = path.join(here, '..', 'dist');
const SCREENSHOTS = path.join(here, 'screenshots');

/** A screenshot of the page as it is, and axe-core's check of it: no serious or critical violation. */
export async function shot(on: Page, name: string): Promise<void> {
  await on.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
  expect(await accessibilityViolations(on), `accessibility of ${name}`).toEqual([]);
}

/** Collects what the browser reports about the Content-Security-Policy: the console must need nothing it forbids. */
export function watchPolicy(watched: Page, violations: string[]): void {
  watched.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
}

/**
 * Types the current code on the sign-in page with the keyboard alone (Tab to the field, Enter to send) and
 * waits for the documents page; the code it used.
 */
export async function signIn(on: Page, secret: string): Promise<string> {
  const code = await generate({ secret });
  const field = on.getByLabel('Code from your authenticator app');
  await field.waitFor();
  const focused = () => on.evaluate<boolean>(`document.activeElement?.id === 'totp'`);
  for (let presses = 0; !(await focused()); presses++) {
    expect(presses, 'Tab reaches the code field').toBeLessThan(10);
    await on.keyboard.press('Tab');
  }
  await on.keyboard.type(code);
  await on.keyboard.press('Enter');
  await on.getByRole('heading', { name: 'Collections' }).waitFor();
  return code;
}

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's WCAG 2 A/AA rules on the page as it is now; the serious and critical violations, each as
 * "rule: the elements". The script is evaluated through the DevTools protocol, which the page's CSP does
 * not govern (a <script> tag would be refused, as it should be).
 */
export async function accessibilityViolations(on: Page): Promise<string[]> {
  if (!(await on.evaluate<boolean>('typeof window.axe === "object"'))) await on.evaluate(AXE_SOURCE);
  const violations = await on.evaluate<{ id: string; impact: string | null; nodes: { target: unknown }[] }[]>(
    `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })
       .then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => ({ target: n.target })) })))`,
  );
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
}

/** What `consoleE2e` gives a test file; read inside tests and hooks (it is set up by beforeAll). */
export interface ConsoleE2e {
  /** The stack with the console built into dist/. */
  readonly stack: Stack;
  /** The `ops` program, tenant admin of acme. */
  readonly admin: Client;
  readonly browser: Browser;
  /** What the browser reported about the Content-Security-Policy, on every page opened by `signedIn`. */
  readonly policyViolations: string[];
  /**
   * A page of a new browser context presenting the person's certificate, watched for the CSP, at the
   * console and signed in (the context closes with the file). `initScript` runs in every page first.
   */
  signedIn(
    person: { client: { certPem: string; keyPem: string }; secret: string },
    options?: { initScript?: string },
  ): Promise<{ context: BrowserContext; page: Page }>;
}

/**
 * (Not named `use…`: in this React package the linter takes that for a React hook, which this is not.)
 * The set-up every console e2e file shares: the stack serving the console (with the worker for
 * `worker: true`; `indexWorkerThreshold`: indexes of databases above it are left to a worker, as
 * startStack says), acme with its admin program `ops`, the database `shop`, then `seed` (documents,
 * indexes…), and Chromium; all closed after the file.
 */
export function consoleE2e(
  options: {
    worker?: boolean;
    indexWorkerThreshold?: number;
    seed?: (admin: Client, stack: Stack) => Promise<void>;
  } = {},
): ConsoleE2e {
  let stack: Stack | undefined;
  let admin: Client | undefined;
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  const policyViolations: string[] = [];
  const started = <T>(value: T | undefined): T => {
    if (value === undefined)
      throw new Error('the console e2e stack is not started yet (use it in a test or hook)');
    return value;
  };
  beforeAll(async () => {
    stack = await startStack({
      consoleDir: DIST,
      worker: options.worker,
      indexWorkerThreshold: options.indexWorkerThreshold,
    });
    admin = await stack.tenantAdmin({ id: 'acme', name: 'Acme' }, 'ops');
    await stack.running('acme');
    expect((await admin.call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
    await options.seed?.(admin, stack);
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await stack?.close();
  });
  return {
    get stack() {
      return started(stack);
    },
    get admin() {
      return started(admin);
    },
    get browser() {
      return started(browser);
    },
    policyViolations,
    async signedIn(person, signInOptions = {}) {
      const context = await personContext(started(browser), started(stack).gateway.url, person.client);
      contexts.push(context);
      if (signInOptions.initScript !== undefined) await context.addInitScript(signInOptions.initScript);
      const page = await context.newPage();
      watchPolicy(page, policyViolations);
      await page.goto(started(stack).gateway.url);
      await signIn(page, person.secret);
      return { context, page };
    },
  };
}
