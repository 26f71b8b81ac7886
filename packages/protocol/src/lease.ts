import { z } from 'zod';

// What a host tells the tenant processes it runs about its own lease (docs/scale-out.md, "Fencing:
// epochs and lease deadlines"). The host holds a lease on the control store; its tenants must stop
// acknowledging writes by themselves once it lapses, even if the host is paused or cut off and
// cannot tell them. So the host hands each tenant a deadline, renewed with every lease renewal.

/**
 * The placement epoch of a tenant on its host: raised by the control store each time the tenant
 * changes owner. Mirror generations carry it; the highest wins. 0 on one machine (no fleet).
 */
export const PlacementEpochSchema = z.number().int().min(0).max(9_999_999_999);

/** A lease longer than a day is a configuration mistake. */
export const MAX_LEASE_MS = 86_400_000;

/**
 * Milliseconds the host's lease has left, as the host measured it when it sent them. A duration,
 * never a timestamp: the tenant adds it to its own monotonic clock when the message arrives, so
 * wall clocks that disagree (or jump) cannot stretch a lease. Delivery can only make the tenant's
 * deadline later than the host's by the delivery delay; the control store's grace period before
 * re-placing a tenant covers it.
 */
export const LeaseRemainingMsSchema = z.number().int().min(0).max(MAX_LEASE_MS);

/** Host → tenant (IPC): the host renewed its lease (or learned it lost it: `remainingMs: 0`). */
export const LeaseMessageSchema = z
  .object({ type: z.literal('lease'), remainingMs: LeaseRemainingMsSchema })
  .strict();
export type LeaseMessage = z.infer<typeof LeaseMessageSchema>;
