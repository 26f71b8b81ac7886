import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JobTypeRegistry } from './job-types.js';

describe('JobTypeRegistry', () => {
  it('refuses type names pg-boss could not use as queue names, and leases out of range', () => {
    const payload = z.json();
    expect(() => new JobTypeRegistry({ Backup: { payload } })).toThrow(/job type name "Backup"/);
    expect(() => new JobTypeRegistry({ 'backup now': { payload } })).toThrow(/job type name/);
    expect(() => new JobTypeRegistry({ backup: { payload, leaseMs: 500 } })).toThrow(/lease of job type/);
    expect(new JobTypeRegistry({ 'index-rebuild': { payload } }).names()).toEqual(['index-rebuild']);
  });

  it('stores the payload as JSON and hands the handler what the schema outputs', () => {
    const registry = new JobTypeRegistry({
      sweep: { payload: z.object({ database: z.string(), batch: z.number().default(100) }) },
    });
    const sweep = registry.get('sweep');
    const json = registry.serialisePayload(sweep, { database: 'orders' });
    expect(JSON.parse(json)).toEqual({ database: 'orders' });
    expect(registry.parsePayload(sweep, JSON.parse(json))).toEqual({ database: 'orders', batch: 100 });
    expect(() => registry.serialisePayload(sweep, { database: 7 })).toThrow(
      expect.objectContaining({ code: 'InvalidJobPayload' }),
    );
  });
});
