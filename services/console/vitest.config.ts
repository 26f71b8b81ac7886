import { mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.ts';

// The browser tests live in e2e/: they drive the built console (dist/, made by `vite build` first) in
// Debian's Chromium through the real gateway.
export default mergeConfig(sharedConfig, {
  test: { include: ['e2e/**/*.test.ts'], testTimeout: 180_000, hookTimeout: 180_000 },
});
