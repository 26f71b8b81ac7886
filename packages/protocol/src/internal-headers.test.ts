import { describe, expect, it } from 'vitest';
import * as protocol from './index.js';
import { INTERNAL_HEADER_PREFIX } from './internal-headers.js';

describe('internal headers', () => {
  // The gateway's only defence against a client forging one (a storage quota of 2^50, a work-unit count)
  // is dropping every field with the prefix: a header named without it would be forwarded as the client sent it.
  it('every *_HEADER constant is a lower-case field under the prefix the gateway drops', () => {
    const headers = Object.entries(protocol).filter(([name]) => name.endsWith('_HEADER'));
    expect(headers.map(([name]) => name).sort()).toEqual([
      'INTERNAL_TOKEN_HEADER',
      'PLACEMENT_EPOCH_HEADER',
      'STORAGE_QUOTA_HEADER',
      'WORK_UNITS_HEADER',
    ]);
    for (const [, value] of headers) {
      expect(value).toMatch(/^[a-z-]+$/);
      expect((value as string).startsWith(INTERNAL_HEADER_PREFIX)).toBe(true);
    }
  });
});
