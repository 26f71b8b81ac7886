// Prometheus metrics of one gateway: request counts and latency by status
// class, requests per tenant, open WebSockets. Served at /metrics to operators.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export class GatewayMetrics {
  private readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'rookery_gateway_requests_total',
    help: 'Requests answered by the gateway, by method and status class.',
    labelNames: ['method', 'status'] as const,
    registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: 'rookery_gateway_request_duration_seconds',
    help: 'Time from the request to the end of its answer, including the tenant.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  private readonly perTenant = new Counter({
    name: 'rookery_gateway_tenant_requests_total',
    help: 'Requests proxied to each tenant.',
    labelNames: ['tenant'] as const,
    registers: [this.registry],
  });

  private openSockets: () => number = () => 0;

  constructor() {
    const openSockets = () => this.openSockets();
    new Gauge({
      name: 'rookery_gateway_open_websockets',
      help: 'WebSockets open through the gateway (changes feeds, subscription connections).',
      registers: [this.registry],
      collect() {
        this.set(openSockets());
      },
    });
  }

  /** Where the open WebSockets gauge reads its value when scraped. */
  countOpenWebSockets(count: () => number): void {
    this.openSockets = count;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  observe(method: string, status: number, ms: number): void {
    this.requests.inc({ method, status: `${Math.floor(status / 100)}xx` });
    this.duration.observe(ms / 1000);
  }

  tenantRequest(tenant: string): void {
    this.perTenant.inc({ tenant });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
