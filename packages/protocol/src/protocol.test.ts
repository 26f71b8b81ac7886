import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BatchRequestSchema, PatchPathSchema } from './commands.js';
import { DatabaseNameSchema } from './database.js';
import { DocumentIdSchema, MAX_ID_BYTES, MetadataInputSchema } from './documents.js';
import { ErrorCodes, RookeryError } from './errors.js';

describe('document ids', () => {
  it('accepts ordinary and unicode ids', () => {
    for (const id of ['users/1-A', 'players/bella@dona.self', 'cities/ålesund', 'users/', 'users|']) {
      expect(DocumentIdSchema.safeParse(id).success).toBe(true);
    }
  });

  it('rejects empty, oversized, padded and control-character ids', () => {
    for (const id of [
      '',
      ' users/1',
      'users/1 ',
      'a\u0000b',
      'tab\there',
      'é'.repeat(MAX_ID_BYTES / 2 + 1),
    ]) {
      expect(DocumentIdSchema.safeParse(id).success).toBe(false);
    }
  });

  it('never throws and accepts exactly the ids within the rules (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 600 }), (id) => {
        const ok = DocumentIdSchema.safeParse(id).success;
        const expected =
          id.length > 0 &&
          Buffer.byteLength(id, 'utf8') <= MAX_ID_BYTES &&
          // biome-ignore lint/suspicious/noControlCharactersInRegex: mirrors the rule under test
          !/[\u0000-\u001f\u007f]/.test(id) &&
          id.trim() === id;
        expect(ok).toBe(expected);
      }),
    );
  });
});

describe('metadata, batches and names', () => {
  it('validates the metadata the server interprets and keeps the rest', () => {
    expect(MetadataInputSchema.safeParse({ '@collection': 'Users', Custom: [1] }).success).toBe(true);
    expect(MetadataInputSchema.safeParse({ '@expires': '2026-01-01T00:00:00Z' }).success).toBe(true);
    expect(MetadataInputSchema.safeParse({ '@expires': 'tomorrow' }).success).toBe(false);
    expect(MetadataInputSchema.safeParse({ '@collection': '' }).success).toBe(false);
  });

  it('parses the three command types and refuses unknown ones', () => {
    const ok = BatchRequestSchema.safeParse({
      Commands: [
        { Type: 'PUT', Id: 'a/1', Document: { A: 1 }, ChangeVector: null },
        { Type: 'DELETE', Id: 'a/2', ChangeVector: 'A:1-x' },
        { Type: 'PATCH', Id: 'a/3', Patch: { Operations: [{ Op: 'increment', Path: 'N', By: 1 }] } },
      ],
    });
    expect(ok.success).toBe(true);
    expect(BatchRequestSchema.safeParse({ Commands: [{ Type: 'EXPLODE', Id: 'a' }] }).success).toBe(false);
    expect(BatchRequestSchema.safeParse({ Commands: [] }).success).toBe(false);
    expect(PatchPathSchema.safeParse('a..b').success).toBe(false);
    expect(PatchPathSchema.safeParse('a.__proto__').success).toBe(false);
  });

  it('accepts safe database names only', () => {
    expect(DatabaseNameSchema.safeParse('Shop-2026.eu_1').success).toBe(true);
    for (const name of ['', '.hidden', '../etc', 'a/b', 'a b', 'x'.repeat(65)]) {
      expect(DatabaseNameSchema.safeParse(name).success).toBe(false);
    }
  });
});

describe('errors', () => {
  it('round-trips through problem+json with code, status and details', () => {
    const error = new RookeryError('ConcurrencyConflict', 'stale', {
      id: 'a/1',
      actualChangeVector: 'A:2-x',
    });
    const problem = error.toProblem();
    expect(problem).toMatchObject({ status: 409, code: 'ConcurrencyConflict', detail: 'stale', id: 'a/1' });
    const back = RookeryError.fromProblem(JSON.parse(JSON.stringify(problem)));
    expect(back).toMatchObject({ code: 'ConcurrencyConflict', status: 409, message: 'stale' });
    expect(back.details).toEqual({ id: 'a/1', actualChangeVector: 'A:2-x' });
  });

  it('maps every code to a 4xx or 5xx status', () => {
    for (const status of Object.values(ErrorCodes)) expect(status >= 400 && status < 600).toBe(true);
  });
});
