// Which host owns each tenant, as the gateway last read it from the control store (fleet routing,
// fleet-router.ts). Read on the request path, so an answer is reused for `ttlMs` and concurrent misses of
// one tenant share one read; a tenant that is placed nowhere yet is placed by its first request
// (placeTenant, which two gateways placing at once agree on). The entry goes early when the host it names
// answers 421 TenantNotHere or cannot be reached; a 421 that names a newer owner is taken as is.
import { performance } from 'node:perf_hooks';
import type { FleetStore } from '@rookery/control-store';
import { gatewayError } from './refusal.js';

/** Where a tenant is served: its host, that host's relay address, and the placement's epoch. */
export interface Located {
  hostId: string;
  address: string;
  epoch: number;
}

interface Entry {
  located: Promise<Located>;
  /** Set once the read answered: what drop() compares with. */
  value?: Located;
  until: number;
}

export function samePlacement(a: Located, b: Located): boolean {
  return a.hostId === b.hostId && a.address === b.address && a.epoch === b.epoch;
}

export class PlacementCache {
  private readonly known = new Map<string, Entry>();

  constructor(
    private readonly store: Pick<FleetStore, 'getPlacement' | 'placeTenant'>,
    private readonly ttlMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get(tenantId: string): Promise<Located> {
    const cached = this.known.get(tenantId);
    if (cached && cached.until > this.now()) return cached.located;
    // The entry's life counts from before the question, so it is never trusted longer than ttlMs after the answer.
    const entry: Entry = { located: this.read(tenantId), until: this.now() + this.ttlMs };
    this.known.set(tenantId, entry);
    entry.located.then(
      (value) => {
        entry.value = value;
      },
      () => {
        if (this.known.get(tenantId) === entry) this.known.delete(tenantId); // a failed read is not remembered
      },
    );
    return entry.located;
  }

  /** The host at `stale` refused or did not answer: forget it, unless a newer read already replaced it. */
  drop(tenantId: string, stale: Located): void {
    const entry = this.known.get(tenantId);
    if (entry?.value && samePlacement(entry.value, stale)) this.known.delete(tenantId);
  }

  /** A host's 421 named the owner under a newer epoch than ours: that is where the tenant is now. */
  learn(tenantId: string, located: Located): void {
    const entry = this.known.get(tenantId);
    if (entry && (!entry.value || entry.value.epoch >= located.epoch)) return;
    this.known.set(tenantId, {
      located: Promise.resolve(located),
      value: located,
      until: this.now() + this.ttlMs,
    });
  }

  private async read(tenantId: string): Promise<Located> {
    const placement = (await this.store.getPlacement(tenantId)) ?? (await this.store.placeTenant(tenantId));
    if (placement.address === null) {
      throw gatewayError(
        'TenantUnavailable',
        `Tenant ${tenantId} is placed on host ${placement.hostId}, which is not registered in the fleet; an operator must re-place it.`,
        {},
        5,
      );
    }
    return { hostId: placement.hostId, address: placement.address, epoch: placement.epoch };
  }
}
