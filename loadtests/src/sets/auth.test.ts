import { verify } from 'otplib';
import { describe, expect, it } from 'vitest';
import { codesFor } from './auth.js';

describe('codesFor', () => {
  it('gives the code of every 30 s step in the window, each valid at its step', async () => {
    const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    const from = Date.UTC(2026, 10, 23, 12, 0, 10);
    const codes = await codesFor(secret, from, from + 95_000);
    const steps = Object.keys(codes).map(Number);
    expect(steps).toEqual([0, 1, 2, 3].map((i) => Math.floor(from / 30_000) + i));
    for (const step of steps) {
      expect(codes[step]).toMatch(/^\d{6}$/);
      const result = await verify({ secret, token: codes[step]!, epoch: step * 30 + 29 });
      expect(result.valid).toBe(true);
    }
  });
});
