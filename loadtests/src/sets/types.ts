// What a scenario set contributes to a run: the k6 script, how to prepare the
// stack (data, tenants, principals), and what the report compares against.
import type { GatewayClient } from '../gateway-client.js';
import type { RunOptions } from '../options.js';
import type { RookeryStack } from '../stack.js';

export interface TlsAuthEntry {
  domains: string[];
  cert: string;
  key: string;
}

export interface Prepared {
  /** Merged into the k6 config file the script reads (`config.<key>`). */
  config: Record<string, unknown>;
  /** Client certificates by host name; the tenant admin's for `localhost` when not given. */
  tlsAuth?: TlsAuthEntry[];
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
