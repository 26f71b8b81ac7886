import { describe, expect, it } from 'vitest';
import { TenantIdSchema } from './tenant-id.js';

describe('TenantIdSchema', () => {
  it('takes one lower-case DNS label and nothing that could name another path', () => {
    for (const id of ['a', 'acme', 'acme-corp', '0day', 'a'.repeat(63)])
      expect(TenantIdSchema.parse(id)).toBe(id);
    for (const id of [
      '',
      'Acme',
      'acme.corp',
      'acme_corp',
      '-acme',
      'a'.repeat(64),
      '..',
      'a/b',
      'a b',
      'café',
    ])
      expect(TenantIdSchema.safeParse(id).success, id).toBe(false);
  });
});
