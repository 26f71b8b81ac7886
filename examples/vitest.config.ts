import { defineConfig } from 'vitest/config';
import { sharedConfig } from '../vitest.shared.ts';

// The examples sit at the top of the folder, where the README points; their tests are in test/.
export default defineConfig({
  ...sharedConfig,
  test: { ...sharedConfig.test, include: ['test/**/*.test.ts'] },
});
