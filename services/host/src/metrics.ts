// Prometheus metrics of one host: how many tenants run, how often and how fast they start, how often they
// crash or are stopped for idleness, how far their mirrors are behind. No per-tenant labels: a host runs
// thousands of tenants (the worst mirror lag is exported; which tenant it is, each tenant's stats say).
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { MirrorLag } from './tenant-process.js';

export class HostMetrics {
  readonly registry = new Registry();
  readonly running: Gauge;
  readonly starts = new Counter({
    name: 'rookery_host_tenant_starts_total',
    help: 'Tenant processes started (from a spare or a fresh process), including restarts after a crash.',
    labelNames: ['from'] as const,
    registers: [this.registry],
  });
  readonly startFailures = new Counter({
    name: 'rookery_host_tenant_start_failures_total',
    help: 'Tenant starts that failed (the process exited or timed out before it was ready).',
    registers: [this.registry],
  });
  readonly startDuration = new Histogram({
    name: 'rookery_host_tenant_start_duration_seconds',
    help: 'From the decision to start a tenant to its process listening on its socket.',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly crashes = new Counter({
    name: 'rookery_host_tenant_crashes_total',
    help: 'Tenant processes that exited without being asked to.',
    registers: [this.registry],
  });
  readonly idleStops = new Counter({
    name: 'rookery_host_tenant_idle_stops_total',
    help: 'Tenants stopped because they had no request for the idle time.',
    registers: [this.registry],
  });
  // Fleet mode (docs/scale-out.md, "Failover").
  readonly reaperMoves = new Counter({
    name: 'rookery_host_reaper_moves_total',
    help: "Tenants this host's reaper re-placed from a host whose lease expired more than the grace ago, by reason.",
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly reaperFailures = new Counter({
    name: 'rookery_host_reaper_failures_total',
    help: 'Re-placements (or whole sweeps) that failed for another reason than another reaper winning the move.',
    registers: [this.registry],
  });
  readonly disownedStops = new Counter({
    name: 'rookery_host_tenant_disowned_stops_total',
    help: 'Running tenants stopped because the control store gave them to another owner (found on a new lease or a wake).',
    registers: [this.registry],
  });

  /** Fleet mode: planned moves of a tenant to another host (mover.ts), by outcome. */
  readonly moves = new Counter({
    name: 'rookery_host_tenant_moves_total',
    help: 'Planned moves of a tenant from this host to another (a drain), by outcome: moved, or failed (it stayed here).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  /** Fleet mode: tenants still placed on this host while it drains (0 when it is not draining). */
  readonly drainTenantsLeft = new Gauge({
    name: 'rookery_host_drain_tenants_left',
    help: 'Tenants still placed on this host while it drains; 0 once drained or when it is not draining.',
    registers: [this.registry],
  });

  readonly mirrorLagSeconds: Gauge;
  readonly mirrorLagTransactions: Gauge;
  readonly mirrored: Gauge;

  /**
   * `mirrorLags`: what each running tenant last reported of its mirror (null: not mirrored, or not reported
   * yet), read at each scrape.
   */
  constructor(countRunning: () => number, mirrorLags: () => Iterable<MirrorLag | null> = () => []) {
    this.running = new Gauge({
      name: 'rookery_host_tenants_running',
      help: 'Tenant processes running (ready to serve).',
      registers: [this.registry],
      collect() {
        this.set(countRunning());
      },
    });
    // The worst of the host's running tenants (each tenant's worst open database): a failover of this host
    // now would lose that much of the writes acknowledged in async mode (docs/mirror.md).
    const worst = () => {
      let seconds = 0;
      let transactions = 0;
      let tenants = 0;
      for (const lag of mirrorLags()) {
        if (lag === null) continue;
        tenants++;
        seconds = Math.max(seconds, lag.ms / 1000);
        transactions = Math.max(transactions, lag.transactions);
      }
      return { seconds, transactions, tenants };
    };
    this.mirrorLagSeconds = new Gauge({
      name: 'rookery_host_tenant_mirror_lag_seconds',
      help: "The largest mirror lag of this host's running tenants: the age of the oldest committed transaction a restore from the mirror would not bring back (0: none behind).",
      registers: [this.registry],
      collect() {
        this.set(worst().seconds);
      },
    });
    this.mirrorLagTransactions = new Gauge({
      name: 'rookery_host_tenant_mirror_lag_transactions',
      help: "The largest number of committed transactions one database of this host's running tenants has not yet on the mirror.",
      registers: [this.registry],
      collect() {
        this.set(worst().transactions);
      },
    });
    // Tells a lag of 0 because every mirror is current from 0 because nothing is mirrored.
    this.mirrored = new Gauge({
      name: 'rookery_host_tenants_mirrored',
      help: 'Running tenants that reported an open mirrored database: the ones the mirror-lag gauges cover.',
      registers: [this.registry],
      collect() {
        this.set(worst().tenants);
      },
    });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
