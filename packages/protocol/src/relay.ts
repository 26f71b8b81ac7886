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

// ── The hand-off (docs/scale-out.md, "The hand-off") ──
// The gateway names the tenant and its epoch in the TLS ClientHello, which the host reads before any TLS
// ends: the server name (SNI) is the tenant's, and one ALPN protocol carries the epoch. A host that owns
// the tenant and runs it passes the accepted connection to the tenant's process, which ends TLS with a
// short-lived certificate naming only that server name; otherwise the host ends TLS itself and the
// upgrade above follows as before. The gateway tells the two apart by the certificate it is shown.

const RELAY_SERVER_NAME_SUFFIX = '.tenant.rookery';
const RELAY_ALPN_PREFIX = 'rookery-relay/';

/** The TLS server name a relay connection to `tenantId` asks for (one DNS label: TENANT_ID_PATTERN). */
export function relayServerName(tenantId: string): string {
  return `${tenantId}${RELAY_SERVER_NAME_SUFFIX}`;
}

/** The tenant a ClientHello's server name names, or null when it is not a relay server name of a valid id. */
export function tenantOfRelayServerName(serverName: string | null): string | null {
  if (serverName === null || !serverName.endsWith(RELAY_SERVER_NAME_SUFFIX)) return null;
  const parsed = TenantIdSchema.safeParse(serverName.slice(0, -RELAY_SERVER_NAME_SUFFIX.length));
  return parsed.success ? parsed.data : null;
}

/** The ALPN protocol a relay connection offers: the placement epoch the gateway believes in. */
export function relayAlpn(epoch: number): string {
  return `${RELAY_ALPN_PREFIX}${epoch}`;
}

/** The epoch among a ClientHello's ALPN protocols, or null when none is a relay epoch. */
export function epochOfRelayAlpn(protocols: readonly string[]): number | null {
  for (const protocol of protocols) {
    if (!protocol.startsWith(RELAY_ALPN_PREFIX)) continue;
    const parsed = PlacementEpochHeaderSchema.safeParse(protocol.slice(RELAY_ALPN_PREFIX.length));
    if (parsed.success) return parsed.data;
  }
  return null;
}

/** The TLS material a tenant's process ends handed-off connections with (issued by its host, short-lived). */
export const RelayTenantTlsSchema = z
  .object({
    /** The tenant's certificate: its relay server name only, no service identity (it cannot pass for a host). */
    certPem: z.string().min(1),
    keyPem: z.string().min(1),
    /** Rookery's CA: the gateway's client certificate must chain to it. */
    caPem: z.string().min(1),
    /** The certificate's serial: a process keeps the material it was given until a newer one comes. */
    serial: z.string().min(1),
  })
  .strict();
export type RelayTenantTls = z.infer<typeof RelayTenantTlsSchema>;

/**
 * Host → tenant (IPC, with the accepted TCP socket as the message's handle): a relay connection handed off.
 * `hello` is what the host read of it already (the ClientHello, base64); `tls` comes with the first
 * connection and whenever the host renewed the certificate.
 */
export const RelayHandOffMessageSchema = z
  .object({
    type: z.literal('relay-connection'),
    hello: z
      .string()
      .max(32 * 1024)
      .regex(/^[A-Za-z0-9+/]*={0,2}$/),
    tls: RelayTenantTlsSchema.optional(),
  })
  .strict();
export type RelayHandOffMessage = z.infer<typeof RelayHandOffMessageSchema>;
