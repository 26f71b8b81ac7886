// Per-tenant concurrency across every worker process, for pg-boss 10, which
// has no per-group limit: a tenant may run N jobs of a type at once because
// there are N slots, each a PostgreSQL session advisory lock on
// hash(type, tenant, slot number). A worker holds one slot per running attempt
// on a connection of its own, so a worker that dies (or loses its connection)
// frees its slots at once, without waiting for any lease.
import pg from 'pg';
import type { Logger } from 'pino';

export interface TenantSlot {
  readonly key: string;
}

export class TenantSlots {
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  /** Slots this process holds or is asking for: advisory locks are re-entrant per session. */
  private readonly taken = new Set<string>();

  constructor(
    private readonly connectionString: string,
    private readonly log: Logger,
  ) {}

  /** A free slot of this tenant for this job type, or null when all `limit` are taken. */
  async tryAcquire(type: string, tenantId: string, limit: number): Promise<TenantSlot | null> {
    for (let slot = 0; slot < limit; slot++) {
      const key = JSON.stringify([type, tenantId, slot]);
      if (this.taken.has(key)) continue;
      this.taken.add(key);
      try {
        const client = await this.connection();
        const { rows } = await client.query<{ ok: boolean }>(
          'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok',
          [key],
        );
        if (rows[0]?.ok) return { key };
        this.taken.delete(key);
      } catch (error) {
        this.taken.delete(key);
        throw error;
      }
    }
    return null;
  }

  async release(slot: TenantSlot): Promise<void> {
    if (!this.taken.delete(slot.key)) return;
    try {
      await this.client?.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [slot.key]);
    } catch (error) {
      // The connection is gone, and with it the lock.
      this.log.warn({ err: error }, 'Releasing a tenant slot failed');
    }
  }

  async close(): Promise<void> {
    const client = this.client ?? (await this.connecting?.catch(() => null));
    this.client = null;
    this.connecting = null;
    await client?.end().catch(() => undefined);
  }

  private connection(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const client = new pg.Client({
        connectionString: this.connectionString,
        application_name: 'rookery-jobs-slots',
      });
      client.on('error', (error) => {
        // Every slot went with the session. Running attempts carry on (their
        // leases still bound them); new claims reconnect.
        this.log.error({ err: error }, 'The tenant-slot connection failed; its slots are released');
        if (this.client === client) this.client = null;
        this.taken.clear();
      });
      try {
        await client.connect();
      } catch (error) {
        this.connecting = null;
        throw error;
      }
      this.client = client;
      this.connecting = null;
      return client;
    })();
    return this.connecting;
  }
}
