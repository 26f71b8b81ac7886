// Usage per tenant per minute, summed in memory on the request path (a few
// additions) and flushed to the control plane in one write every few seconds:
// the store never sits between a request and its answer.
import type { UsageRow } from '@rookery/control-store';

const MINUTE_MS = 60_000;

export interface RequestUsage {
  bytesIn: number;
  bytesOut: number;
  workUnits: number;
}

export class UsageMeter {
  private pending = new Map<string, UsageRow>();

  constructor(private readonly now: () => number = Date.now) {}

  record(tenantId: string, usage: RequestUsage): void {
    const row = this.rowOf(tenantId);
    row.requests++;
    row.bytesIn += usage.bytesIn;
    row.bytesOut += usage.bytesOut;
    row.workUnits += usage.workUnits;
  }

  /**
   * Bytes an open WebSocket carried since it was last metered: counted in the minute they are metered
   * in, without a request (the upgrade was the request).
   */
  recordTraffic(tenantId: string, traffic: { bytesIn: number; bytesOut: number }): void {
    if (traffic.bytesIn === 0 && traffic.bytesOut === 0) return;
    const row = this.rowOf(tenantId);
    row.bytesIn += traffic.bytesIn;
    row.bytesOut += traffic.bytesOut;
  }

  private rowOf(tenantId: string): UsageRow {
    const minute = Math.floor(this.now() / MINUTE_MS) * MINUTE_MS;
    const key = `${tenantId}\u0000${minute}`;
    let row = this.pending.get(key);
    if (!row) {
      row = { tenantId, minute, requests: 0, bytesIn: 0, bytesOut: 0, workUnits: 0 };
      this.pending.set(key, row);
    }
    return row;
  }

  /** Hands over everything recorded so far (usage-flusher.ts sends it, and again until it is confirmed). */
  take(): UsageRow[] {
    const rows = [...this.pending.values()];
    this.pending = new Map();
    return rows;
  }
}
