// What every console e2e file does with a page: sign in with the keyboard alone, screenshots, the
// Content-Security-Policy watch, and axe-core's accessibility check.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from 'otplib';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

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
