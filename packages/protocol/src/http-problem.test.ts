import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RookeryError } from './errors.js';
import { rookeryErrorFromThrown } from './http-problem.js';

const context = { maxBodyBytes: 1024 };

describe('rookeryErrorFromThrown', () => {
  it('keeps RookeryErrors and names the field of a zod failure', () => {
    const own = new RookeryError('Forbidden', 'no');
    expect(rookeryErrorFromThrown(own, context)).toBe(own);
    const zod = z.object({ name: z.string() }).safeParse({ name: 1 });
    const mapped = rookeryErrorFromThrown(zod.error, context);
    expect([mapped.code, mapped.status]).toEqual(['InvalidRequest', 400]);
    expect(mapped.message).toContain('name');
  });

  it("maps fastify's body errors by code, with the service's hints", () => {
    const tooLarge = rookeryErrorFromThrown(
      { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 },
      {
        maxBodyBytes: 10,
        hints: { bodyTooLarge: 'stream it' },
      },
    );
    expect([tooLarge.code, tooLarge.message, tooLarge.details]).toEqual([
      'PayloadTooLarge',
      'The request body is larger than 10 bytes; stream it',
      { limitBytes: 10 },
    ]);
    expect(rookeryErrorFromThrown({ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }, context).code).toBe(
      'UnsupportedMediaType',
    );
    expect(rookeryErrorFromThrown({ code: 'FST_ERR_CTP_INVALID_JSON_BODY' }, context).code).toBe(
      'InvalidJson',
    );
    expect(rookeryErrorFromThrown({ code: 'FST_ERR_CTP_EMPTY_JSON_BODY' }, context).code).toBe('InvalidJson');
  });

  it('answers other 4xx as InvalidRequest and anything else as InternalError, without its message', () => {
    expect(rookeryErrorFromThrown({ statusCode: 400, message: 'bad header' }, context)).toMatchObject({
      code: 'InvalidRequest',
      message: 'bad header',
    });
    const internal = rookeryErrorFromThrown(new Error('secret path /etc/x'), context);
    expect(internal.code).toBe('InternalError');
    expect(internal.message).not.toContain('/etc/x');
    expect(rookeryErrorFromThrown('a string', context).code).toBe('InternalError');
  });
});
