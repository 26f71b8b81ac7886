// The size budget of issue [12]: the console adds at most 250 KB of gzip-compressed JavaScript to the first
// page load. Measured on the production build (`npm test` builds first) as the browser fetches it: every
// script and module preload index.html names, compressed as the gateway could send them.
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DIST } from './pages.js';

const BUDGET_BYTES = 250 * 1000;

/** The JavaScript files the first load fetches: index.html's module scripts and module preloads. */
function firstLoadScripts(dist: string): string[] {
  const html = fs.readFileSync(path.join(dist, 'index.html'), 'utf8');
  const named = [
    ...html.matchAll(/<script[^>]*\bsrc="([^"]+)"/g),
    ...html.matchAll(/<link[^>]*rel="modulepreload"[^>]*href="([^"]+)"/g),
  ].map((match) => match[1]!);
  return [...new Set(named)].map((src) => path.join(dist, src.replace(/^\//, '')));
}

describe('the console build', () => {
  it(`adds at most ${BUDGET_BYTES / 1000} KB of compressed JavaScript to the first page load`, () => {
    const scripts = firstLoadScripts(DIST);
    expect(scripts.length, 'index.html names its script').toBeGreaterThan(0);
    const compressed = scripts.reduce((sum, file) => sum + gzipSync(fs.readFileSync(file)).length, 0);
    expect(compressed).toBeLessThanOrEqual(BUDGET_BYTES);
  });
});
