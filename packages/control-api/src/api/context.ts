// What the control API's routes work with: the store and the secrets its
// operations need (the CA issues certificates, the master key seals TOTP secrets),
// and the job queue the worker fleet runs from.

import { type ControlStore, parseInput } from '@rookery/control-store';
import type { JobQueue } from '@rookery/jobs';
import type { CertificateAuthority } from '@rookery/pki';
import type { RookeryJobTypes } from '@rookery/protocol';
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';

export interface ControlContext {
  store: ControlStore;
  ca: CertificateAuthority;
  masterKey: Buffer;
  /** Null when the API's host has no queue: the job routes then answer 503 JobQueueUnavailable. */
  jobs: JobQueue<RookeryJobTypes> | null;
}

/** A request's path parameters, parsed. */
export function paramsOf<T>(schema: z.ZodType<T>, request: FastifyRequest): T {
  return parseInput(schema, request.params, 'path');
}

/** A request's query string, parsed. */
export function queryOf<T>(schema: z.ZodType<T>, request: FastifyRequest): T {
  return parseInput(schema, request.query, 'query string');
}

/** A request's JSON body, parsed; a missing body reads as `{}` so optional-only bodies may be left out. */
export function bodyOf<T>(schema: z.ZodType<T>, request: FastifyRequest, what: string): T {
  return parseInput(schema, request.body ?? {}, what);
}
