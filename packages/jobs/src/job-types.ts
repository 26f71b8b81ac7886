// The registered job types: which types exist, the schema of each payload and
// the lease of each attempt. A payload is checked as the JSON that will be
// stored, so what a handler later reads back is exactly what was accepted.
import { RookeryError } from '@rookery/protocol';
import { z } from 'zod';
import { DEFAULT_LEASE_MS, JobTypeNameSchema, LeaseMsSchema, parseRequest } from './requests.js';
import type { JobTypeDefinition, JobTypes } from './types.js';

export interface RegisteredJobType {
  name: string;
  payload: z.ZodType;
  leaseMs: number;
}

export class JobTypeRegistry {
  private readonly types = new Map<string, RegisteredJobType>();

  constructor(types: JobTypes) {
    for (const [name, definition] of Object.entries(types)) {
      parseRequest(JobTypeNameSchema, name, `job type name "${name}"`);
      this.types.set(name, register(name, definition));
    }
  }

  names(): string[] {
    return [...this.types.keys()];
  }

  /** The type, or `UnknownJobType`. */
  get(name: string): RegisteredJobType {
    const type = this.types.get(name);
    if (!type) {
      const known = this.names().join(', ') || '(none)';
      throw new RookeryError(
        'UnknownJobType',
        `There is no job type "${name}" on this queue. Registered types: ${known}.`,
        { jobType: name },
      );
    }
    return type;
  }

  /** The payload as stored JSON text, or `InvalidJobPayload`. */
  serialisePayload(type: RegisteredJobType, payload: unknown): string {
    let json: string | undefined;
    try {
      json = JSON.stringify(payload);
    } catch (error) {
      throw invalidPayload(type.name, `it is not JSON (${(error as Error).message})`);
    }
    if (json === undefined) throw invalidPayload(type.name, 'it is not JSON');
    this.parsePayload(type, JSON.parse(json));
    return json;
  }

  /** A stored payload as the handler receives it (the schema's output), or `InvalidJobPayload`. */
  parsePayload(type: RegisteredJobType, stored: unknown): unknown {
    const result = type.payload.safeParse(stored);
    if (!result.success) throw invalidPayload(type.name, z.prettifyError(result.error), result.error);
    return result.data;
  }
}

function register(name: string, definition: JobTypeDefinition): RegisteredJobType {
  const leaseMs = parseRequest(LeaseMsSchema.optional(), definition.leaseMs, `lease of job type "${name}"`);
  return { name, payload: definition.payload, leaseMs: leaseMs ?? DEFAULT_LEASE_MS };
}

function invalidPayload(type: string, reason: string, error?: z.ZodError): RookeryError {
  return new RookeryError('InvalidJobPayload', `The payload of a "${type}" job is not valid: ${reason}`, {
    jobType: type,
    ...(error
      ? { issues: error.issues.slice(0, 20).map((i) => ({ path: i.path.map(String), message: i.message })) }
      : {}),
  });
}
