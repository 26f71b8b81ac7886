import { RookeryError } from '@rookery/protocol';
import { describe, expect, it } from 'vitest';
import { tenantSafeError } from './tenant-safe-errors.js';

const PLACES = ['/srv/rookery/data/backups', '/srv/rookery/data', 's3://bucket/prefix'];

describe('tenantSafeError', () => {
  it('passes our own errors through when they name no place of the server', () => {
    const error = new RookeryError('BackupNotFound', 'There is no backup of acme/shop.', {
      database: 'shop',
    });
    expect(tenantSafeError(error, PLACES, 'job-1')).toBe(error);
  });

  it("takes the server's places out of our own errors' messages and details, keeping the code", () => {
    const error = new RookeryError(
      'BackupCorrupt',
      'The backup at /srv/rookery/data/backups/acme/b1 is bad.',
      {
        backup: 's3://bucket/prefix/acme/b1',
      },
    );
    const safe = tenantSafeError(error, PLACES, 'job-1') as RookeryError;
    expect(safe.code).toBe('BackupCorrupt');
    expect(safe.message).toBe('The backup at (a location on the server)/acme/b1 is bad.');
    expect(safe.details).toEqual({ backup: '(a location on the server)/acme/b1' });
  });

  it('replaces any other error by one that names its system code and the job, never its message', () => {
    const enoent = Object.assign(new Error("ENOENT: no such file or directory, open '/elsewhere/x'"), {
      code: 'ENOENT',
    });
    const safe = tenantSafeError(enoent, PLACES, 'job-7') as RookeryError;
    expect(safe.code).toBe('InternalError');
    expect(safe.message).toMatch(/^The job failed on an internal error \(ENOENT\);/);
    expect(safe.message).toContain('job job-7');
    expect(safe.message).not.toContain('/elsewhere');
    const odd = tenantSafeError(Object.assign(new Error('x'), { code: 'not a code /etc' }), PLACES, 'j');
    expect(odd.message).not.toContain('/etc');
    expect(tenantSafeError('a string', PLACES, 'j').message).toMatch(/internal error;/);
  });
});
