// What a scenario set contributes to a run: the k6 script, how to prepare the
// stack (data, tenants, principals), and what the report compares against.
import type { GatewayClient } from '../gateway-client.js';
import type { RunOptions } from '../options.js';
import type { RookeryStack } from '../stack.js';

/** A client certificate's PEM files. */
export interface ClientCertificate {
  cert: string;
  key: string;
}

export interface Prepared {
  /** Merged into the k6 config file the script reads (`config.<key>`). */
  config: Record<string, unknown>;
  /** The client certificate k6 presents (one per k6 process); the tenant admin's when not given. */
  tlsAuth?: ClientCertificate;
  /** k6 options beside the scenarios (hosts, noConnectionReuse, thresholds). */
  k6Options?: Record<string, unknown>;
  /** A line printed under the table: the seed's figures to compare with, if any. */
  seedLine?: string | null;
  /** One line on what was set up, for the report's heading. */
  description: string;
}

export interface ScenarioSetDefinition {
  /** The k6 script in loadtests/k6/. */
  script: string;
  /** Database the script works in (created by the runner before `prepare`). */
  database: string;
  /** Extra environment for the host and the gateway. */
  stackEnv?(options: RunOptions): Record<string, string>;
  prepare(stack: RookeryStack, client: GatewayClient, options: RunOptions): Promise<Prepared>;
}
