// The official `ravendb` npm client (pinned in package.json) against a whole embedded Rookery, end to end
// over mutual TLS through the real gateway (test-fixtures/stack.ts). The client reads only `RSA PRIVATE KEY`
// PEM blocks and Rookery issues ECDSA keys, so it is given what a user gets from
// `rookery cert issue --format pkcs12`: a PKCS#12 file made by @rookery/pki's toPkcs12, with a password.
import { toPkcs12 } from '@rookery/pki';
import { DocumentStore } from 'ravendb';
import { type Client, type Stack, startStack } from '../test-fixtures/stack.js';

export interface RavenFixture {
  stack: Stack;
  admin: Client;
  /** A DocumentStore of the official client on `database`, initialized; closed by close(). */
  store(database: string): Promise<DocumentStore>;
  /** Creates `name` through Rookery's own API. */
  createDatabase(name: string): Promise<void>;
  close(): Promise<void>;
}

const PASSWORD = 'ravendb-compat-password';

export async function startRavenFixture(tenantId: string): Promise<RavenFixture> {
  const stack = await startStack();
  const admin = await stack.tenantAdmin({ id: tenantId, name: tenantId }, 'ops');
  await stack.running(tenantId);
  const pfx = await toPkcs12({
    certPem: admin.certPem,
    keyPem: admin.keyPem,
    caPem: stack.ca.certPem,
    password: PASSWORD,
    friendlyName: 'ops',
  });
  const stores: DocumentStore[] = [];
  return {
    stack,
    admin,
    async createDatabase(name) {
      const reply = await admin.call('PUT', '/admin/databases', { Name: name });
      if (reply.status !== 201 && reply.status !== 200)
        throw new Error(`creating ${name}: ${reply.status} ${reply.text}`);
    },
    async store(database) {
      const store = new DocumentStore(stack.gateway.url, database, {
        type: 'pfx',
        certificate: pfx,
        password: PASSWORD,
        ca: stack.ca.certPem,
      });
      store.initialize();
      stores.push(store);
      return store;
    },
    async close() {
      for (const store of stores.splice(0)) store.dispose();
      await stack.close();
    },
  };
}
