// Prometheus metrics of one host: how many tenants run, how often and how fast they start, how often they
// crash or are stopped for idleness. No per-tenant labels: a host runs thousands of tenants.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

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

  constructor(countRunning: () => number) {
    this.running = new Gauge({
      name: 'rookery_host_tenants_running',
      help: 'Tenant processes running (ready to serve).',
      registers: [this.registry],
      collect() {
        this.set(countRunning());
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
