// Fleet mode: a planned move of one tenant from this host to another (a drain moves them one by one,
// drain.ts). The order is what makes it lose nothing and fail no request (docs/scale-out.md, "Drains and
// rolling upgrades"):
//   1. close the tenant's door on this host (tenant-moves.ts): wakes already inside finish, new ones wait;
//   2. stop the tenant gracefully: it finishes the requests it is answering, commits its queued writes and
//      closes its mirror, which ships what is queued first (in sync mode every acknowledged write is in the
//      mirror already; in async mode this is the flush). A tenant that does not exit cleanly (killed at the
//      stop timeout, or a non-zero exit) may not have flushed: it is not moved, and stays placed here;
//   3. move the placement to the least loaded live, active host with room (the store's relocatePlacement,
//      the reaper's move too: a compare-and-swap on the placement epoch, which the move raises);
//   4. forget the cached ownership and open the door: the requests held meanwhile ask the store again and
//      are answered 421 TenantNotHere naming the new owner, which restores the tenant from the mirror.
import type { FleetStore, Placement } from '@rookery/control-store';
import { RookeryError } from '@rookery/protocol';
import type { Logger } from 'pino';
import type { HostMetrics } from './metrics.js';
import type { TenantOwnership } from './ownership.js';
import type { TenantSupervisor } from './supervisor.js';
import type { TenantMoves } from './tenant-moves.js';
import type { Exit } from './tenant-process.js';

export interface MoverOptions {
  store: Pick<FleetStore, 'getPlacement' | 'relocatePlacement'>;
  hostId: string;
  supervisor: Pick<TenantSupervisor, 'stop' | 'on' | 'off'>;
  ownership: Pick<TenantOwnership, 'forget'>;
  moves: TenantMoves;
  metrics: Pick<HostMetrics, 'moves'>;
  logger: Logger;
}

export class TenantMover {
  constructor(private readonly options: MoverOptions) {}

  /**
   * Moves the tenant, placed on this host, to another host; answers its new placement. Fails (and the
   * tenant stays placed here, started again by its next wake) when it is not placed here
   * (`PlacementConflict`, `TenantNotPlaced`), did not stop cleanly (`TenantUnavailable`), or no host can
   * take it (`NoHostAvailable`).
   */
  async move(tenantId: string): Promise<Placement> {
    const { moves, ownership, metrics } = this.options;
    try {
      const placement = await moves.closedFor(tenantId, async () => {
        try {
          const from = await this.placedHere(tenantId);
          await this.stopCleanly(tenantId);
          return await this.moveAway(from);
        } finally {
          // Whatever happened, the next wake asks the store: it says where the tenant is now.
          ownership.forget(tenantId);
        }
      });
      metrics.moves.inc({ outcome: 'moved' });
      return placement;
    } catch (error) {
      metrics.moves.inc({ outcome: 'failed' });
      throw error;
    }
  }

  private async placedHere(tenantId: string): Promise<Placement> {
    const placement = await this.options.store.getPlacement(tenantId);
    if (!placement) {
      throw new RookeryError(
        'TenantNotPlaced',
        `Tenant ${tenantId} is not placed on any host: nothing to move.`,
      );
    }
    if (placement.hostId !== this.options.hostId) {
      throw new RookeryError(
        'PlacementConflict',
        `Tenant ${tenantId} is placed on host ${placement.hostId}, not on ${this.options.hostId}: only its owner moves it.`,
      );
    }
    return placement;
  }

  /** Stops the tenant here; throws unless its process exited by itself with 0 (or was not running). */
  private async stopCleanly(tenantId: string): Promise<void> {
    const { supervisor } = this.options;
    let exit: Exit | null = null;
    const onExit = (id: string, info: Exit) => {
      if (id === tenantId) exit = { code: info.code, signal: info.signal };
    };
    supervisor.on('exited', onExit);
    try {
      await supervisor.stop(tenantId);
    } finally {
      supervisor.off('exited', onExit);
    }
    const seen = exit as Exit | null;
    if (seen && (seen.code !== 0 || seen.signal !== null)) {
      throw new RookeryError(
        'TenantUnavailable',
        `Tenant ${tenantId} did not stop cleanly (exit code ${seen.code}, signal ${seen.signal}): its mirror may lack its last writes, so it stays on host ${this.options.hostId}; see the host's log, then drain again.`,
      );
    }
  }

  /** Moves the placement away; the store picks the host and says NoHostAvailable when none can take it. */
  private async moveAway(from: Placement): Promise<Placement> {
    const { store, hostId, logger } = this.options;
    const moved = await store.relocatePlacement(from.tenantId, from.epoch);
    logger.info(
      { tenant: from.tenantId, from: hostId, to: moved.hostId, epoch: moved.epoch },
      'tenant moved to another host',
    );
    return moved;
  }
}
