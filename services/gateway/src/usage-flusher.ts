// Sends what the meter summed to the control store. Every flush adds (any number of gateways may flush the
// same tenant and minute), so a flush must be added exactly once: each carries an id (this gateway's id and
// a counter), and one that failed is sent again as it was, with the same id, before anything newer. The
// store records the id with the sums in one transaction, so a flush whose answer was lost after its commit
// (a timeout, a dropped connection) adds nothing the second time — giving its rows back to the meter, as
// this did before, counted them twice.
import type { ControlStore, UsageRow } from '@rookery/control-store';
import type { Logger } from 'pino';
import type { UsageMeter } from './metering.js';

export class UsageFlusher {
  private sent = 0;
  /** A flush the store did not confirm: sent again, unchanged, first. */
  private unconfirmed: { id: string; rows: UsageRow[] } | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Pick<ControlStore, 'addUsage'>,
    private readonly meter: UsageMeter,
    private readonly gatewayId: string,
    private readonly log: Logger,
  ) {}

  /** Flushes everything recorded so far (after an unconfirmed flush, if one waits); one flush at a time. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      // At most two rounds: the unconfirmed flush, then what was recorded since.
      for (let round = 0; round < 2; round++) {
        if (!this.unconfirmed) {
          const rows = this.meter.take();
          if (rows.length === 0) return;
          this.unconfirmed = { id: `${this.gatewayId}.${++this.sent}`, rows };
        }
        const flush = this.unconfirmed;
        try {
          await this.store.addUsage(flush.rows, flush.id);
          this.unconfirmed = null;
        } catch (error) {
          this.log.warn({ err: error, flush: flush.id }, 'usage flush failed; sending it again next time');
          return;
        }
      }
    });
    return this.flushing;
  }
}
