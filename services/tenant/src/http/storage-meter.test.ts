import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { makeTempDir } from '@rookery/testkit';
import { describe, expect, it } from 'vitest';
import { StorageMeter } from './storage-quota.js';

describe('StorageMeter', () => {
  it('counts what was written since its last measurement, then measures again after maxAgeMs', async () => {
    const { dir, cleanup } = makeTempDir('storage-meter-');
    let now = 1_000;
    const meter = new StorageMeter(dir, 1_000, () => now);
    // The tenant's first request: an empty directory.
    expect(await meter.recent()).toBe(0);
    // Writes land on disk while the figure is still fresh: their bodies count until the next measurement.
    writeFileSync(path.join(dir, 'docs.db'), Buffer.alloc(5_000));
    meter.wrote(120);
    meter.wrote(80);
    meter.wrote(0);
    expect(await meter.recent()).toBe(200);
    // Past maxAgeMs the directory is walked again, and the estimate gives way to what is there.
    now += 1_000;
    expect(await meter.recent()).toBe(5_000);
    cleanup();
  });

  it('has nothing to add to before its first measurement', async () => {
    const { dir, cleanup } = makeTempDir('storage-meter-');
    const meter = new StorageMeter(dir, 1_000, () => 0);
    meter.wrote(500);
    expect(await meter.recent()).toBe(0);
    cleanup();
  });
});
