import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FLAG_COMPRESSED } from './compression.js';
import { documentJsonOf, documentOf, FLAG_ARCHIVED, storedBody } from './document-shape.js';
import type { DocumentRow } from './storage/statements.js';

const jsonObject = fc.dictionary(
  fc.oneof(fc.string(), fc.constantFrom('@metadata', '__proto__', 'constructor')),
  fc.jsonValue(),
);

describe('documentOf', () => {
  it('equals parsing the spliced JSON text, key order included, for any stored form', () => {
    fc.assert(
      fc.property(
        jsonObject,
        fc.option(jsonObject, { nil: null }),
        fc.boolean(),
        fc.constantFrom(0, 1, 100_000),
        (body, metadata, archived, threshold) => {
          const stored = storedBody(
            {
              bodyJson: JSON.stringify(body),
              metadataJson: null,
              collection: undefined,
              expiresAt: null,
              archiveAt: null,
              archived,
            },
            threshold,
          );
          const row: DocumentRow = {
            etag: 42,
            id: 'users/1',
            collection: 'Users',
            last_modified: Date.UTC(2026, 10, 26),
            flags: stored.flags,
            // Stored metadata never holds server-owned keys; anything else a user sent may be there.
            metadata: metadata && Object.keys(metadata).length > 0 ? JSON.stringify(metadata) : null,
            body: stored.body,
          };
          if (archived)
            expect(row.flags & (FLAG_ARCHIVED | FLAG_COMPRESSED)).toBe(FLAG_ARCHIVED | FLAG_COMPRESSED);
          const spliced = JSON.parse(documentJsonOf(row, 'db1'));
          const parsed = documentOf(row, 'db1');
          expect(JSON.stringify(parsed)).toBe(JSON.stringify(spliced));
          expect(Object.getPrototypeOf(parsed['@metadata'])).toBe(Object.prototype);
        },
      ),
      { numRuns: 300 },
    );
  });
});
