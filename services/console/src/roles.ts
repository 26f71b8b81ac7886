// What the signed-in principal may change, read from its role (GET /auth/session), so the pages can hide
// what it cannot do. Only a convenience: the gateway decides every request (services/gateway/src/
// authorize.ts) and the console shows its refusal as for any other error.
import type { Session } from './api.js';

type Role = Session['Principal']['Role'];

/** Per-database grants of a `{ kind: 'database' }` role; names compare without case, as in the gateway. */
function grantOf(role: Role, database: string): string | undefined {
  const access = role.access;
  if (typeof access !== 'object' || access === null) return undefined;
  const wanted = database.toLowerCase();
  for (const [name, grant] of Object.entries(access)) if (name.toLowerCase() === wanted) return String(grant);
  return undefined;
}

/** Documents and indexes of `database` may be written (saved, deleted, created, defined, reset). */
export function canWrite(role: Role, database: string): boolean {
  if (role.kind === 'operator' || role.kind === 'tenant-admin') return true;
  return role.kind === 'database' && grantOf(role, database) === 'read-write';
}
