// The relay between a gateway and a fleet host (docs/scale-out.md, "Routing"): the gateway reaches a
// tenant on another machine through the host that owns it, over mutual TLS. It opens a connection to the
// host's relay port and asks for an upgrade:
//
//   GET /tenants/<id>/relay HTTP/1.1
//   Connection: Upgrade
//   Upgrade: rookery-relay
//   x-rookery-internal-token: <ROOKERY_INTERNAL_TOKEN>
//   x-rookery-placement-epoch: <the placement epoch the gateway believes in>
//
// The host checks that it owns the tenant and wakes it, and only then answers `101 Switching Protocols`
// (with the epoch it serves under); from then on the connection carries the gateway's HTTP/1.1 exchanges
// with the tenant's socket byte for byte, as a connection of the gateway's pool. Any other answer is
// problem+json and ends the connection before a byte reached the tenant: 421 TenantNotHere
// (HostTenantNotHereAnswerSchema: the owner and epoch as the store says), 503 LeaseExpired, or what a wake
// answers (503 TenantStarting, TenantUnavailable, …).
import { z } from 'zod';
import { PlacementEpochSchema } from './lease.js';
import { TenantIdSchema } from './tenant-id.js';

/** The `Upgrade` token of a relay connection. */
export const RELAY_UPGRADE_PROTOCOL = 'rookery-relay';

/** The placement epoch, asked for by the gateway and answered (in the 101) by the host. */
export const PLACEMENT_EPOCH_HEADER = 'x-rookery-placement-epoch';

/** The header's value: a placement epoch, written in decimal. */
export const PlacementEpochHeaderSchema = z
  .string()
  .regex(/^\d{1,10}$/, 'a placement epoch is a whole number')
  .transform(Number)
  .pipe(PlacementEpochSchema);

const RELAY_PATH = /^\/tenants\/([^/?]+)\/relay$/;

/** The relay request's path for a tenant. */
export function relayPath(tenantId: string): string {
  return `/tenants/${encodeURIComponent(tenantId)}/relay`;
}

/** The tenant a relay request's target names, or null when the target is not a relay path of a valid id. */
export function tenantOfRelayPath(target: string): string | null {
  const match = RELAY_PATH.exec(target);
  if (!match) return null;
  const parsed = TenantIdSchema.safeParse(match[1]);
  return parsed.success ? parsed.data : null;
}
