import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadEnvConfig } from './env-config.js';

const Schema = z.object({
  port: z.coerce.number().int().min(0).max(65_535).default(8080),
  name: z.string().min(1).optional(),
});
const NAMES = { port: 'ROOKERY_TEST_PORT', name: 'ROOKERY_TEST_NAME' };

describe('loadEnvConfig', () => {
  it('reads variables, skips empty ones, and lets overrides win', () => {
    expect(
      loadEnvConfig('test', Schema, NAMES, { ROOKERY_TEST_PORT: '9000', ROOKERY_TEST_NAME: '' }),
    ).toEqual({
      port: 9000,
    });
    expect(loadEnvConfig('test', Schema, NAMES, { ROOKERY_TEST_PORT: '9000' }, { port: 1 })).toEqual({
      port: 1,
    });
  });

  it('names the variable to fix when a value is bad', () => {
    expect(() => loadEnvConfig('test', Schema, NAMES, { ROOKERY_TEST_PORT: 'eighty' })).toThrow(
      /^Invalid test configuration: ROOKERY_TEST_PORT: /,
    );
  });
});
