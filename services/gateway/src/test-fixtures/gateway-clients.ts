// Principals and their TLS connections to a gateway, for end-to-end tests: a principal made in the store
// gets a real certificate from the CA, and calls the gateway over real mutual TLS (undici). Shared by the
// one-machine stack (stack.ts) and the fleet (fleet-stack.ts).
import {
  type ControlStore,
  type CreatePrincipalInput,
  issuePrincipalCertificate,
  type Principal,
  type Role,
} from '@rookery/control-store';
import type { CertificateAuthority } from '@rookery/pki';
import { Agent, request } from 'undici';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: Record<string, unknown>;
  text: string;
}

/**
 * One call to `url` through `agent` (which carries the client certificate): a body that is not a string goes
 * as JSON; the answer's text, and its JSON when it is JSON (else `{}`).
 */
export async function callWith(
  agent: Agent,
  url: string,
  method: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const response = await request(url, {
    method: method as 'GET',
    dispatcher: agent,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.body.text();
  let json: Record<string, unknown> = {};
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    // not JSON
  }
  return { status: response.statusCode, headers: response.headers, json, text };
}

/** Calls the gateway over TLS with one client certificate. */
export interface Connection {
  agent: Agent;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
}

export interface Client extends Connection {
  principal: Principal;
  thumbprint: string;
  serial: string;
  certPem: string;
  keyPem: string;
}

export interface GatewayClients {
  client(input: CreatePrincipalInput): Promise<Client>;
  /** A program principal of `tenantId` (null: an operator) with `role`, a tenant admin unless said otherwise. */
  program(name: string, tenantId: string | null, role?: Role): Promise<Client>;
  /** A connection with a certificate issued elsewhere (e.g. through the control API). */
  connect(pems: { certPem: string; keyPem: string }): Connection;
  /** Closes every connection made here. */
  close(): Promise<void>;
}

/** Clients of the gateway at `url()` (read at each call: a test may point them at another gateway). */
export function gatewayClients(
  store: ControlStore,
  ca: CertificateAuthority,
  url: () => string,
): GatewayClients {
  const agents: Agent[] = [];
  function connect({ certPem, keyPem }: { certPem: string; keyPem: string }): Connection {
    const agent = new Agent({
      connect: { ca: ca.certPem, cert: certPem, key: keyPem, servername: 'localhost' },
    });
    agents.push(agent);
    return {
      agent,
      call: (method, urlPath, body, headers) => callWith(agent, url() + urlPath, method, body, headers),
    };
  }

  async function client(input: CreatePrincipalInput): Promise<Client> {
    const principal = await store.createPrincipal(input);
    const issued = await issuePrincipalCertificate(store, ca, { principalId: principal.id, validDays: 30 });
    return {
      principal,
      thumbprint: issued.record.thumbprint,
      serial: issued.record.serial,
      certPem: issued.certPem,
      keyPem: issued.keyPem,
      ...connect(issued),
    };
  }

  return {
    client,
    connect,
    program: (name, tenantId, role = { kind: 'tenant-admin' }) =>
      client({ tenantId, kind: 'program', name, role }),
    async close() {
      for (const agent of agents.splice(0)) await agent.close().catch(() => undefined);
    },
  };
}
