// The cast the end-to-end tests share: a stack with two tenants, acme and globex; acme's tenant admin,
// who has created acme's `shop` database, and a principal that may only read that database; and an
// operator. Tests add the principals and data of their own.
import { type Client, type Stack, type StackOptions, startStack } from './stack.js';

export interface TwoTenants {
  stack: Stack;
  /** acme's tenant admin. */
  adminA: Client;
  /** Read-only on acme's `shop`, nothing more. */
  readerA: Client;
  operator: Client;
}

export async function startTwoTenants(options: StackOptions = {}): Promise<TwoTenants> {
  const stack = await startStack(options);
  try {
    await stack.store.createTenant({ id: 'acme', name: 'Acme' });
    await stack.store.createTenant({ id: 'globex', name: 'Globex' });
    const adminA = await stack.program('acme-admin', 'acme');
    const readerA = await stack.program('acme-reader', 'acme', {
      kind: 'database',
      access: { shop: 'read-only' },
    });
    const operator = await stack.program('ops', null, { kind: 'operator' });
    await stack.running('acme');
    const created = await adminA.call('PUT', '/admin/databases', { Name: 'shop' });
    if (created.status !== 201) throw new Error(`creating acme's shop: ${created.status} ${created.text}`);
    return { stack, adminA, readerA, operator };
  } catch (error) {
    await stack.close();
    throw error;
  }
}
