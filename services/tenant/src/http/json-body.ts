import { assertNestingWithin, MAX_JSON_DEPTH, REQUEST_ENVELOPE_DEPTH } from '@rookery/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * JSON request bodies are parsed as before (fastify's parser, refusing `__proto__` and `constructor`
 * keys), then refused with 400 `NestingTooDeep` if they nest deeper than a document may, plus the few
 * levels a request wraps around its documents. Parsing is iterative and safe at any depth; what runs after
 * it (merge patches, zod, JSON.stringify) is recursive, and a body 5,000 levels deep used to end in a 500.
 */
export function limitJsonNesting(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, jsonBodyParser(app));
}

/** The parser limitJsonNesting installs, for a route that must also read JSON sent without its media type. */
export function jsonBodyParser(app: FastifyInstance): ContentTypeParserFunction {
  const parse = app.getDefaultJsonParser('error', 'error');
  return (request, body, done) => {
    const checked = (error: Error | null, value?: unknown) => {
      if (error) return done(error, undefined);
      try {
        assertNestingWithin(value, MAX_JSON_DEPTH + REQUEST_ENVELOPE_DEPTH, 'The request body');
      } catch (refused) {
        return done(refused as Error, undefined);
      }
      done(null, value);
    };
    const text = body as string;
    // A body that cannot hold the refused keys skips secure-json-parse's scans for them; one that does not
    // parse (empty, malformed, a byte-order mark) goes to fastify's parser, for the same 400 as before.
    if (cannotHoldPoisonedKeys(text)) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return parse(request, text, checked);
      }
      return checked(null, value);
    }
    parse(request, text, checked);
  };
}

/**
 * True when JSON text cannot contain a `__proto__` or `constructor` key, not even \u-escaped: such text
 * needs no scan for them after JSON.parse (secure-json-parse's scans were ~6% of a bulk insert and ~3% of
 * a PUT in CPU profiles, docs/benchmarks.md).
 */
export function cannotHoldPoisonedKeys(text: string): boolean {
  return !text.includes('__proto__') && !text.includes('constructor') && !text.includes('\\u');
}

type ContentTypeParserFunction = (
  request: FastifyRequest,
  body: string | Buffer,
  done: (error: Error | null, value?: unknown) => void,
) => void;
