import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTempDir, spawnTs, waitForExit } from './index.js';

describe('testkit', () => {
  it('makes a real temporary directory and removes it', () => {
    const { dir, cleanup } = makeTempDir();
    fs.writeFileSync(path.join(dir, 'f'), 'x');
    expect(fs.readFileSync(path.join(dir, 'f'), 'utf8')).toBe('x');
    cleanup();
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('runs a TypeScript entry point in a child process and reports how it exited', async () => {
    const { dir, cleanup } = makeTempDir();
    try {
      const entry = path.join(dir, 'child.ts');
      fs.writeFileSync(entry, 'const n: number = 7;\nprocess.send!({ n });\nprocess.exit(3);\n');
      const child = spawnTs(entry);
      const message = await new Promise((resolve) => child.once('message', resolve));
      expect(message).toEqual({ n: 7 });
      expect(await waitForExit(child)).toEqual({ code: 3, signal: null });
    } finally {
      cleanup();
    }
  });
});
