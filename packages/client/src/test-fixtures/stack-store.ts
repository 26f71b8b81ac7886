// The real service for integration tests: the gateway's end-to-end stack (control store, CA, host with
// real tenant processes, gateway on HTTPS), one tenant with a database, and DocumentStores that present
// real client certificates over TLS.
import { type Client, type Stack, startStack } from '@rookery/gateway/testing';
import type { DocumentConventions } from '../conventions.js';
import { DocumentStore } from '../document-store.js';

type PrincipalInput = Parameters<Stack['client']>[0];

export interface StackWithStores {
  stack: Stack;
  tenantId: string;
  database: string;
  admin: Client;
  /** A store for a principal's certificate (the tenant admin's unless given another). */
  store(
    client?: Client,
    options?: { database?: string; conventions?: Partial<DocumentConventions> },
  ): DocumentStore;
  principal(input: Omit<PrincipalInput, 'tenantId'>): Promise<Client>;
  close(): Promise<void>;
}

export async function startStackWithStores(tenantId: string, database = 'shop'): Promise<StackWithStores> {
  const stack = await startStack();
  const stores: DocumentStore[] = [];
  try {
    await stack.store.createTenant({
      id: tenantId,
      name: tenantId,
      quota: { requestsPerSecond: 1e6, storageBytes: 2 ** 40 },
    });
    const admin = await stack.client({
      tenantId,
      kind: 'program',
      name: 'admin',
      role: { kind: 'tenant-admin' },
    });
    const created = await admin.call('PUT', '/admin/databases', { Name: database });
    if (created.status !== 201) throw new Error(`creating ${database}: ${created.status} ${created.text}`);
    return {
      stack,
      tenantId,
      database,
      admin,
      store(client = admin, options = {}) {
        const store = new DocumentStore({
          url: stack.gateway.url,
          database: options.database ?? database,
          certificate: { cert: client.certPem, key: client.keyPem },
          ca: stack.ca.certPem,
          conventions: options.conventions,
        }).initialize();
        stores.push(store);
        return store;
      },
      principal: (input) => stack.client({ ...input, tenantId } as PrincipalInput),
      async close() {
        for (const store of stores) await store.close().catch(() => undefined);
        await stack.close();
      },
    };
  } catch (error) {
    await stack.close();
    throw error;
  }
}
