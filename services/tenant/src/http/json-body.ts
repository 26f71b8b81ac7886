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
    parse(request, body as string, (error, value) => {
      if (error) return done(error, undefined);
      try {
        assertNestingWithin(value, MAX_JSON_DEPTH + REQUEST_ENVELOPE_DEPTH, 'The request body');
      } catch (refused) {
        return done(refused as Error, undefined);
      }
      done(null, value);
    });
  };
}

type ContentTypeParserFunction = (
  request: FastifyRequest,
  body: string | Buffer,
  done: (error: Error | null, value?: unknown) => void,
) => void;
