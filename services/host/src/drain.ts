// Fleet mode: a host the operator marked draining (`rookery host drain <id>`: the control store's state,
// which placeTenant and movePlacement already respect — no new tenant lands here) moves its tenants away
// itself, one at a time (mover.ts), so a rolling upgrade never stops many tenants at once. It notices on
// its own lease renewals (every TTL/3; fleet-mode.ts calls check()), so the operator needs to reach only
// the control store, never the host. Progress: a log line per tenant ("moved 3/10") and the
// rookery_host_drain_tenants_left gauge; the CLI's `--wait` watches the store's placement count.
import type { FleetStore } from '@rookery/control-store';
import type { Logger } from 'pino';
import type { HostMetrics } from './metrics.js';
import type { TenantMover } from './mover.js';

export interface DrainOptions {
  store: Pick<FleetStore, 'getHost' | 'listPlacements'>;
  hostId: string;
  mover: Pick<TenantMover, 'move'>;
  metrics: Pick<HostMetrics, 'drainTenantsLeft'>;
  logger: Logger;
}

export class Drainer {
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly options: DrainOptions) {}

  /** Looks whether this host is draining and, if so, moves its tenants; one pass at a time. */
  check(): void {
    if (this.running || this.stopped) return;
    this.running = this.pass()
      .catch((error: unknown) =>
        this.options.logger.warn({ err: error }, 'drain pass failed; retried at the next renewal'),
      )
      .finally(() => {
        this.running = null;
      });
  }

  /** No new pass; resolves once the move under way (if any) has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  /**
   * One pass over the tenants placed here. The state is read again before each move: an operator who
   * activates the host mid-drain stops it after the tenant being moved. A tenant that could not be moved
   * (no host with room, an unclean stop) is tried again on the next pass.
   */
  private async pass(): Promise<void> {
    const { store, hostId, mover, metrics, logger } = this.options;
    if (!(await this.draining())) {
      metrics.drainTenantsLeft.set(0);
      return;
    }
    const placements = await store.listPlacements(hostId);
    const total = placements.length;
    metrics.drainTenantsLeft.set(total);
    if (total === 0) return;
    logger.info({ tenants: total }, 'host draining: moving its tenants to other hosts one by one');
    let moved = 0;
    for (const { tenantId } of placements) {
      if (this.stopped) return;
      if (!(await this.draining())) {
        logger.info({ moved, total }, 'host no longer draining: the drain stops here');
        return;
      }
      try {
        const to = await mover.move(tenantId);
        moved++;
        logger.info(
          { tenant: tenantId, to: to.hostId, epoch: to.epoch, moved, total },
          `drain: moved ${moved}/${total}`,
        );
      } catch (error) {
        logger.warn(
          { err: error, tenant: tenantId, moved, total },
          'drain: tenant not moved; tried again on the next pass',
        );
      }
      metrics.drainTenantsLeft.set((await store.listPlacements(hostId)).length);
    }
    if (moved === total) logger.info({ moved, total }, 'host drained: every tenant moved');
  }

  private async draining(): Promise<boolean> {
    const host = await this.options.store.getHost(this.options.hostId);
    return host?.state === 'draining';
  }
}
