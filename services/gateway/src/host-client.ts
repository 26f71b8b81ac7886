// The gateway's side of the host's internal API: wake a tenant and learn its
// socket. A woken tenant's socket is remembered, so a request to a running
// tenant costs no round trip to the host; a refused connection forgets it.
import { INTERNAL_TOKEN_HEADER } from '@rookery/protocol';
import { request } from 'undici';
import { z } from 'zod';

export type WakeResult =
  | { ok: true; socketPath: string }
  | { ok: false; status: number; code: string; message: string; retryAfterSeconds: number | null };

export interface TenantStorage {
  bytes: number;
}

/** The part of the host's tenant stats the gateway reads: databases whose files it could read carry their id. */
const TenantDatabasesSchema = z.object({
  databases: z.array(z.object({ name: z.string().min(1), databaseId: z.string().optional() })),
});

export class HostClient {
  private readonly sockets = new Map<string, string>();
  private readonly waking = new Map<string, Promise<WakeResult>>();

  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  /** The socket of a running tenant, waking it if needed; concurrent callers share one wake. */
  async socketOf(tenantId: string): Promise<WakeResult> {
    const known = this.sockets.get(tenantId);
    if (known) return { ok: true, socketPath: known };
    let pending = this.waking.get(tenantId);
    if (!pending) {
      pending = this.wake(tenantId).finally(() => this.waking.delete(tenantId));
      this.waking.set(tenantId, pending);
    }
    return pending;
  }

  forget(tenantId: string): void {
    this.sockets.delete(tenantId);
  }

  /** Bytes the tenant stores, read by the host without waking it. */
  async storageOf(tenantId: string): Promise<TenantStorage | null> {
    const response = await request(`${this.baseUrl}/tenants/${encodeURIComponent(tenantId)}/stats`, {
      headers: { [INTERNAL_TOKEN_HEADER]: this.token },
    });
    const body = (await response.body.json()) as { bytesOnDisk?: unknown };
    if (response.statusCode !== 200 || typeof body.bytesOnDisk !== 'number') return null;
    return { bytes: body.bytesOnDisk };
  }

  /** Names of the databases the tenant stores, read by the host from its files without waking it. */
  async databasesOf(tenantId: string): Promise<{ readable: string[]; unreadable: string[] }> {
    const response = await request(`${this.baseUrl}/tenants/${encodeURIComponent(tenantId)}/stats`, {
      headers: { [INTERNAL_TOKEN_HEADER]: this.token },
    });
    const body: unknown = await response.body.json();
    const stats = TenantDatabasesSchema.safeParse(body);
    if (response.statusCode !== 200 || !stats.success) {
      throw new Error(`the host answered ${response.statusCode} to the stats of tenant ${tenantId}`);
    }
    const readable = stats.data.databases.filter((d) => d.databaseId !== undefined).map((d) => d.name);
    const unreadable = stats.data.databases.filter((d) => d.databaseId === undefined).map((d) => d.name);
    return { readable, unreadable };
  }

  private async wake(tenantId: string): Promise<WakeResult> {
    const response = await request(`${this.baseUrl}/tenants/${encodeURIComponent(tenantId)}/wake`, {
      method: 'POST',
      headers: { [INTERNAL_TOKEN_HEADER]: this.token },
    });
    const body = (await response.body.json()) as Record<string, unknown>;
    if (response.statusCode === 200 && typeof body.socketPath === 'string') {
      this.sockets.set(tenantId, body.socketPath);
      return { ok: true, socketPath: body.socketPath };
    }
    const retryAfter = Number(response.headers['retry-after']);
    return {
      ok: false,
      status: response.statusCode,
      code: typeof body.code === 'string' ? body.code : 'TenantUnavailable',
      message: typeof body.detail === 'string' ? body.detail : `the host answered ${response.statusCode}`,
      retryAfterSeconds: Number.isFinite(retryAfter) ? retryAfter : null,
    };
  }
}
