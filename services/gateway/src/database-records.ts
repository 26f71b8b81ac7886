// Keeps the control store's record of each tenant's databases in step with the
// database creations and deletions the gateway proxies, so GET
// /control/databases (read from the store, never waking the tenant) agrees
// with the tenant. Only successful answers count (201 for PUT, 2xx for DELETE).
//
// The proxy streams request bodies, so the name in a PUT's body never passes
// through the gateway: after a creation the host lists the tenant's databases
// from its files and every one the store lacks is recorded (which also heals
// records missed before). A deletion names its database in the query string, or (RavenDB's
// DeleteDatabasesOperation) in its body: then every record the host no longer has a database for goes.
import type { ControlStore } from '@rookery/control-store';
import { DatabaseNameSchema, isRookeryError } from '@rookery/protocol';
import type { Logger } from 'pino';
import type { TenantRouter } from './tenant-router.js';

const ADMIN_DATABASES = '/admin/databases';

export class DatabaseRecords {
  /** Per tenant, the recording still running: records of one tenant are made in the order they were proxied. */
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly store: ControlStore,
    private readonly hosts: Pick<TenantRouter, 'databasesOf'>,
    private readonly log: Logger,
  ) {}

  /**
   * Notes the outcome of a proxied request. Must be called as soon as the answer
   * has been relayed, with no await before: a client's next request then finds
   * the recording in `settled()`.
   */
  afterProxied(tenantId: string, method: string, upstreamPath: string, status: number): void {
    const [path, query] = upstreamPath.split('?', 2) as [string, string | undefined];
    if (path !== ADMIN_DATABASES) return;
    let record: (() => Promise<void>) | null = null;
    if (method === 'PUT' && status === 201) record = () => this.recordCreated(tenantId);
    if (method === 'DELETE' && status >= 200 && status < 300) {
      const named = new URLSearchParams(query).get('name');
      const name = DatabaseNameSchema.safeParse(named);
      if (name.success) record = () => this.recordDeleted(tenantId, name.data);
      else if (named === null) record = () => this.recordDeletedByHost(tenantId);
    }
    if (!record) return;
    const next = (this.running.get(tenantId) ?? Promise.resolve()).then(record).catch((error: unknown) => {
      // The client has its answer already; the next creation through any gateway records it again.
      this.log.warn(
        { err: error, tenant: tenantId },
        'could not record a database change in the control store',
      );
    });
    this.running.set(tenantId, next);
    void next.finally(() => {
      if (this.running.get(tenantId) === next) this.running.delete(tenantId);
    });
  }

  /** Resolves once every recording started so far is done (a control request waits for it). */
  async settled(): Promise<void> {
    await Promise.all(this.running.values());
  }

  private async recordCreated(tenantId: string): Promise<void> {
    const stored = await this.hosts.databasesOf(tenantId);
    if (stored.unreadable.length > 0) {
      this.log.warn({ tenant: tenantId, databases: stored.unreadable }, 'databases the host could not read');
    }
    const recorded = new Set((await this.store.listDatabases(tenantId)).map((d) => d.name.toLowerCase()));
    for (const name of stored.readable) {
      if (recorded.has(name.toLowerCase())) continue;
      await this.store.createDatabase(tenantId, name).catch(ignore('DatabaseAlreadyExists'));
    }
  }

  /** Drops the records of databases the host no longer has (those it could not read stay recorded). */
  private async recordDeletedByHost(tenantId: string): Promise<void> {
    const stored = await this.hosts.databasesOf(tenantId);
    const present = new Set([...stored.readable, ...stored.unreadable].map((name) => name.toLowerCase()));
    for (const { name } of await this.store.listDatabases(tenantId)) {
      if (!present.has(name.toLowerCase())) await this.recordDeleted(tenantId, name);
    }
  }

  private async recordDeleted(tenantId: string, name: string): Promise<void> {
    await this.store.deleteDatabase(tenantId, name).catch(ignore('DatabaseNotFound'));
  }
}

/** Another gateway (or the CLI) got there first: the record already says what we wanted it to. */
function ignore(code: string) {
  return (error: unknown) => {
    if (!(isRookeryError(error) && error.code === code)) throw error;
  };
}
