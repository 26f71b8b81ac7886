import { describe, expect, it } from 'vitest';
import { RookeryError } from './errors.js';
import { QueryRequestSchema } from './queries.js';
import { isRavenClient, RavenDateSchema, toRavenCommandResult } from './ravendb.js';

/** JSON.parse with the reviver RavenDB's client parses error bodies with (camel-cases every key). */
function asRavenClientReads(text: string): Record<string, unknown> {
  return JSON.parse(text, function (this: Record<string, unknown>, key, value) {
    if (!key || Array.isArray(this)) return value;
    const camel = key.charAt(0).toLowerCase() + key.slice(1);
    if (camel === key) return value;
    this[camel] = value;
    return undefined;
  });
}

describe("RavenDB's dialect", () => {
  it('reads zone-less dates with seven fractional digits as UTC, and zoned ones as given', () => {
    expect(RavenDateSchema.parse('0001-02-01T00:00:00.0000000')).toBe(
      new Date('0001-02-01T00:00:00Z').getTime(),
    );
    expect(RavenDateSchema.parse('2026-01-31T12:00:00.1234567')).toBe(Date.UTC(2026, 0, 31, 12, 0, 0, 123));
    expect(RavenDateSchema.parse('2026-01-31T12:00:00+01:00')).toBe(Date.UTC(2026, 0, 31, 11));
    expect(RavenDateSchema.safeParse('2026-01-31').success).toBe(false);
    expect(RavenDateSchema.safeParse('2026-13-45T99:00:00').success).toBe(false);
  });

  it("a problem body carries RavenDB's Type, Message and Error after its own type, and reads back without them", () => {
    const error = new RookeryError('ConcurrencyConflict', 'users/1 changed meanwhile; load it again', {
      ActualChangeVector: 'A:2',
    });
    const text = JSON.stringify(error.toProblem());
    expect(asRavenClientReads(text)).toMatchObject({
      type: 'Raven.Client.Exceptions.ConcurrencyException',
      message: 'users/1 changed meanwhile; load it again',
      error: 'users/1 changed meanwhile; load it again',
    });
    const back = RookeryError.fromProblem(JSON.parse(text));
    expect(back.details).toEqual({ ActualChangeVector: 'A:2' });
    expect(JSON.parse(text).type).toBe('https://rookery.dev/errors/ConcurrencyConflict');
  });

  it('names a 400 without a RavenDB counterpart BadRequestException, anything else Rookery.<code>', () => {
    expect(new RookeryError('InvalidJson', 'x').toProblem().Type).toBe(
      'Raven.Client.Exceptions.BadRequestException',
    );
    expect(new RookeryError('TenantStarting', 'x').toProblem().Type).toBe('Rookery.TenantStarting');
  });

  it("a PUT's result carries only the stored document's metadata; other results keep Rookery's keys", () => {
    const put = {
      Type: 'PUT',
      Id: 'users/1',
      ChangeVector: 'A:1',
      Collection: 'Users',
      LastModified: 'now',
    } as const;
    expect(toRavenCommandResult(put)).toEqual({
      Type: 'PUT',
      '@id': 'users/1',
      '@change-vector': 'A:1',
      '@collection': 'Users',
      '@last-modified': 'now',
    });
    expect(toRavenCommandResult({ ...put, Collection: null })).not.toHaveProperty('@collection');
    const deleted = {
      Type: 'DELETE',
      Id: 'users/1',
      ChangeVector: null,
      Collection: null,
      LastModified: null,
      Deleted: true,
    } as const;
    expect(toRavenCommandResult(deleted)).toEqual(deleted);
  });

  it('tells a RavenDB client by its Raven-Client-Version header', () => {
    expect(isRavenClient({ 'raven-client-version': '7.2.3' })).toBe(true);
    expect(isRavenClient({ 'user-agent': 'rookery' })).toBe(false);
  });

  it("reads a query's WaitForNonStaleResultsTimeout as milliseconds or a TimeSpan, and a null QueryParameters", () => {
    const parse = (extra: Record<string, unknown>) =>
      QueryRequestSchema.safeParse({ Query: 'from Users', ...extra });
    expect(parse({ WaitForNonStaleResultsTimeout: 15_000 }).data?.WaitForNonStaleResultsTimeout).toBe(15_000);
    expect(parse({ WaitForNonStaleResultsTimeout: '00:00:15' }).data?.WaitForNonStaleResultsTimeout).toBe(
      15_000,
    );
    expect(parse({ WaitForNonStaleResultsTimeout: '00:01:02.5' }).data?.WaitForNonStaleResultsTimeout).toBe(
      62_500,
    );
    expect(parse({ WaitForNonStaleResultsTimeout: '1.00:00:00' }).success).toBe(false);
    expect(parse({ WaitForNonStaleResultsTimeout: '00:10:00' }).success).toBe(true);
    expect(parse({ WaitForNonStaleResultsTimeout: '00:10:00.0000001' }).success).toBe(false);
    expect(parse({ WaitForNonStaleResultsTimeout: 'soon' }).success).toBe(false);
    expect(parse({ QueryParameters: null, DisableCaching: true, SkipDuplicateChecking: true }).success).toBe(
      true,
    );
    expect(parse({ ProjectionBehavior: 'FromIndex' }).success).toBe(false);
  });
});
