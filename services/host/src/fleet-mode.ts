// Fleet mode (ROOKERY_HOST_ID set; docs/scale-out.md, "Host leases"): the host holds a lease on the
// control store, passes it on to its tenants (at start and after every renewal), and serves only the
// tenants placed on it under its live lease. Without ROOKERY_HOST_ID none of this exists: the host never
// opens the control store and behaves as on one machine.
import { type ControlStore, openControlStore } from '@rookery/control-store';
import { RookeryError, readLease } from '@rookery/protocol';
import type { Logger } from 'pino';
import type { HostConfig } from './config.js';
import { Drainer } from './drain.js';
import { LeaseKeeper } from './lease-keeper.js';
import { TenantMover } from './mover.js';
import { cacheMsFor, TenantOwnership } from './ownership.js';
import { Reaper } from './reaper.js';
import type { TenantSupervisor } from './supervisor.js';
import { TenantMoves } from './tenant-moves.js';
import type { LeaseSource } from './tenant-process.js';

export class FleetMode {
  readonly ownership: TenantOwnership;
  /** For the supervisor: what each tenant is started with. */
  readonly leaseSource: LeaseSource;
  /**
   * Each tenant's door on this host, closed while a planned move (a drain) takes it elsewhere: wakes
   * (the API's and the relay's) go through `moves.admit` with the ownership check inside (tenant-moves.ts).
   */
  readonly moves = new TenantMoves();
  /** Made by start(), once the address the host listens at is known. */
  private keeper: LeaseKeeper | null = null;
  private drainer: Drainer | null = null;
  private reaper: Reaper | null = null;

  private constructor(
    private readonly store: ControlStore,
    private readonly config: HostConfig,
    private readonly hostId: string,
    private readonly logger: Logger,
  ) {
    this.ownership = new TenantOwnership({
      store,
      liveEpoch: () => this.keeper?.liveEpoch() ?? null,
      hostId,
      cacheMs: cacheMsFor(config.leaseTtlMs),
    });
    this.leaseSource = {
      placementEpoch: (tenantId) => {
        const epoch = this.ownership.placementEpochOf(tenantId);
        if (epoch === undefined) {
          throw new RookeryError(
            'TenantNotHere',
            `Host ${hostId} has not confirmed that it owns tenant ${tenantId}; wake it through this host's API`,
            { tenantId, owner: null, epoch: null },
          );
        }
        return epoch;
      },
      remainingMs: () => this.keeper?.remainingMs() ?? 0,
    };
  }

  /** Null on one machine (no ROOKERY_HOST_ID): the host then never touches the control store. */
  static async open(config: HostConfig, logger: Logger): Promise<FleetMode | null> {
    if (config.hostId === undefined) return null;
    const store = await openControlStore({ dataDir: config.dataDir, databaseUrl: config.controlDatabaseUrl });
    return new FleetMode(store, config, config.hostId, logger);
  }

  /**
   * Acquires the lease (registering this host at `advertiseUrl`, else the address it listens on) and
   * passes every renewal (and a lapse, as 0) on to the supervisor's tenants. Fails when the store
   * cannot be reached: a host that holds no lease serves nothing.
   */
  async start(supervisor: TenantSupervisor, listeningAt: string): Promise<void> {
    const address = this.config.advertiseUrl ?? listeningAt;
    const keeper = new LeaseKeeper({
      store: this.store,
      hostId: this.hostId,
      address,
      capacity: this.config.hostCapacity,
      ttlMs: this.config.leaseTtlMs,
      logger: this.logger.child({ lease: this.hostId }),
    });
    const pass = () => supervisor.broadcastLease(readLease(() => keeper.remainingMs()));
    keeper.on('renewed', (lease) => {
      pass();
      if (lease.acquired) this.stopDisowned(supervisor, lease.epoch, lease.reclaimed);
    });
    keeper.on('lapsed', pass);
    keeper.on('superseded', () => {
      pass();
      // Another process holds this host id now and may be given these tenants: none of them is ours.
      this.stopAll(supervisor, 'another registration of this host id holds its lease');
    });
    this.keeper = keeper;
    const lease = await keeper.start();
    this.logger.info({ hostId: this.hostId, epoch: lease.epoch, address }, 'holding the host lease');
    this.startDrainer(supervisor, keeper);
    if (this.config.reaperIntervalMs > 0) {
      this.reaper = new Reaper({
        store: this.store,
        liveEpoch: () => keeper.liveEpoch(),
        graceMs: this.config.reaperGraceMs,
        intervalMs: this.config.reaperIntervalMs,
        // Judges others only after holding its lease a TTL and the grace: out of a store outage, the hosts
        // slower to come back are not reaped (reaper.ts).
        settleMs: this.config.leaseTtlMs + this.config.reaperGraceMs,
        logger: this.logger.child({ unit: 'reaper' }),
        moves: supervisor.metrics.reaperMoves,
        failures: supervisor.metrics.reaperFailures,
      });
      this.reaper.start();
    }
  }

  /**
   * After a new lease (docs/scale-out.md, "Failover"): a running tenant goes on only if this host owned it
   * all along — reclaimed from the placement epoch it runs under, so nobody else served it in between — or
   * it was started under the new lease. Every other one was given to another owner while this host was
   * paused or cut off: it is stopped, and its clients, refused at its next wake with 421, go to the owner.
   */
  private stopDisowned(
    supervisor: TenantSupervisor,
    hostEpoch: number,
    reclaimed: { tenantId: string; epoch: number }[],
  ): void {
    const back = new Map(reclaimed.map((p) => [p.tenantId, p.epoch]));
    this.stopWhere(
      supervisor,
      (tenantId, servingEpoch) => {
        const epoch = back.get(tenantId);
        // A reclaim raises the placement epoch by one in the statement that takes the tenant back.
        if (epoch !== undefined && servingEpoch === epoch - 1) return epoch;
        const confirmed = this.ownership.confirmedUnder(tenantId, hostEpoch);
        return confirmed !== undefined && confirmed === servingEpoch ? confirmed : null;
      },
      `stopped the tenants placed elsewhere while this host held no lease (host epoch ${hostEpoch})`,
    );
  }

  /** Stops every running tenant: this host owns none of them any more. */
  private stopAll(supervisor: TenantSupervisor, why: string): void {
    this.stopWhere(supervisor, () => null, `stopped every tenant: ${why}`);
  }

  /** Stops the tenants `owns` answers null for (supervisor.stopDisowned), logging which. */
  private stopWhere(
    supervisor: TenantSupervisor,
    owns: (tenantId: string, servingEpoch: number | null) => number | null,
    what: string,
  ): void {
    void supervisor
      .stopDisowned(owns)
      .then((stopped) => {
        if (stopped.length > 0) this.logger.warn({ stopped }, what);
      })
      .catch((error: unknown) => this.logger.error({ err: error }, 'stopping disowned tenants failed'));
  }

  /** A drain (drain.ts) is noticed on the lease's renewals: the operator only marks the host in the store. */
  private startDrainer(supervisor: TenantSupervisor, keeper: LeaseKeeper): void {
    const mover = new TenantMover({
      store: this.store,
      hostId: this.hostId,
      supervisor,
      ownership: this.ownership,
      moves: this.moves,
      metrics: supervisor.metrics,
      logger: this.logger.child({ unit: 'mover' }),
    });
    const drainer = new Drainer({
      store: this.store,
      hostId: this.hostId,
      mover,
      metrics: supervisor.metrics,
      logger: this.logger.child({ unit: 'drain' }),
    });
    this.drainer = drainer;
    keeper.on('renewed', () => drainer.check());
    drainer.check();
  }

  async close(): Promise<void> {
    await this.drainer?.stop();
    await this.reaper?.stop();
    this.keeper?.stop();
    await this.keeper?.settled();
    await this.store.close();
  }
}
