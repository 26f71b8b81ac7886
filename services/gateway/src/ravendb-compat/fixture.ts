// The official `ravendb` npm client (pinned in package.json) against a whole embedded Rookery, end to end
// over mutual TLS through the real gateway (test-fixtures/stack.ts). The client is given what a user gets
// from `rookery cert issue --format pkcs12`: a PKCS#12 file made by @rookery/pki's toPkcs12, with a
// password; pemStore gives it the PEM form instead (`--key-type rsa-2048`: it reads only `RSA PRIVATE KEY`).
import { type CreateTenantInput, issuePrincipalCertificate } from '@rookery/control-store';
import { type KeyType, toPkcs12 } from '@rookery/pki';
import { generate } from 'otplib';
import { DocumentStore } from 'ravendb';
import { type Client, type Stack, startStack } from '../test-fixtures/stack.js';

export interface RavenFixture {
  stack: Stack;
  admin: Client;
  /**
   * A DocumentStore of the official client on `database` with the tenant admin's certificate; closed by close().
   * `configure` sets its conventions, which freeze when the store is initialised.
   */
  store(database: string, configure?: (store: DocumentStore) => void): Promise<DocumentStore>;
  /**
   * A person (tenant admin) and a DocumentStore with their certificate; with `twoFactor`, a two-factor session
   * bound to that certificate is opened first (POST /auth/2fa with a code of their authenticator).
   */
  personStore(name: string, database: string, twoFactor: boolean): Promise<DocumentStore>;
  /**
   * A DocumentStore on `database` with `type: 'pem'`: a new certificate of the tenant admin, issued with
   * `keyType` as `rookery cert issue --key-type` does, its `.crt` and `.key` concatenated as the client takes them.
   */
  pemStore(database: string, keyType: KeyType): Promise<DocumentStore>;
  /** A DocumentStore on `database` with the certificate of `client` (e.g. another tenant's admin). */
  storeFor(client: Client, database: string): Promise<DocumentStore>;
  /** Creates `name` through Rookery's own API. */
  createDatabase(name: string): Promise<void>;
  close(): Promise<void>;
}

const PASSWORD = 'ravendb-compat-password';

/** Disposes `store` and resolves once its request executors are disposed too. */
function disposed(store: DocumentStore): Promise<void> {
  return new Promise((resolve) => {
    // The client emits afterDispose with a callback once the HiLo range is back, then disposes its executors.
    store.once('afterDispose', (done: () => void) => {
      done();
      setImmediate(resolve);
    });
    store.dispose();
  });
}

/** `quota`: the tenant's, as control's createTenant takes it (the plans' defaults otherwise; the bench lifts them). */
export async function startRavenFixture(
  tenantId: string,
  quota?: CreateTenantInput['quota'],
): Promise<RavenFixture> {
  const stack = await startStack();
  const admin = await stack.tenantAdmin({ id: tenantId, name: tenantId, ...(quota && { quota }) }, 'ops');
  await stack.running(tenantId);
  const stores: DocumentStore[] = [];
  // What `rookery cert issue --format pkcs12` writes for the principal of `client`.
  async function storeFor(
    client: Client,
    database: string,
    configure?: (store: DocumentStore) => void,
  ): Promise<DocumentStore> {
    const pfx = await toPkcs12({
      certPem: client.certPem,
      keyPem: client.keyPem,
      caPem: stack.ca.certPem,
      password: PASSWORD,
      friendlyName: client.principal.name,
    });
    const store = new DocumentStore(stack.gateway.url, database, {
      type: 'pfx',
      certificate: pfx,
      password: PASSWORD,
      ca: stack.ca.certPem,
    });
    configure?.(store);
    store.initialize();
    stores.push(store);
    return store;
  }
  return {
    stack,
    admin,
    async createDatabase(name) {
      const reply = await admin.call('PUT', '/admin/databases', { Name: name });
      if (reply.status !== 201 && reply.status !== 200)
        throw new Error(`creating ${name}: ${reply.status} ${reply.text}`);
    },
    store: (database, configure) => storeFor(admin, database, configure),
    async pemStore(database, keyType) {
      const issued = await issuePrincipalCertificate(stack.store, stack.ca, {
        principalId: admin.principal.id,
        validDays: 30,
        keyType,
      });
      const store = new DocumentStore(stack.gateway.url, database, {
        type: 'pem',
        certificate: issued.certPem + issued.keyPem,
        ca: stack.ca.certPem,
      });
      store.initialize();
      stores.push(store);
      return store;
    },
    storeFor: (client, database) => storeFor(client, database),
    async personStore(name, database, twoFactor) {
      const { client, secret } = await stack.person(name, tenantId);
      if (twoFactor) {
        const opened = await client.call('POST', '/auth/2fa', {
          code: await generate({ secret }),
          minutes: 60,
          binding: 'certificate',
        });
        if (opened.status !== 200 && opened.status !== 201)
          throw new Error(`opening ${name}'s two-factor session: ${opened.status} ${opened.text}`);
      }
      return storeFor(client, database);
    },
    async close() {
      // dispose() returns at once and goes on asynchronously (it gives back the HiLo range with a request, then
      // closes its connections): the stack closes after it has finished, not in the middle of that request.
      await Promise.all(stores.splice(0).map(disposed));
      await stack.close();
    },
  };
}
