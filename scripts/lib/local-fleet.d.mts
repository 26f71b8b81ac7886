// Types of local-fleet.mjs for the TypeScript callers (its test in packages/cli).
import type { ChildProcess, IOType } from 'node:child_process';

export function hostId(n: number): string;
export function fleetHostsOption(args: readonly string[]): number | null;
/** SIGTERM (SIGCONT first) and the exit; nothing if it has exited already. */
export function stopProcess(child: ChildProcess): Promise<void>;

export interface LocalFleetHost {
  id: string;
  child: ChildProcess;
  /** The internal API (plain HTTP, this machine). */
  address: string;
  /** The relay port on mutual TLS, registered with the host's lease. */
  relayAddress: string;
}

export interface LocalFleet<Admin, Store extends { getPlacement(tenantId: string): Promise<unknown> }> {
  dir: string;
  mirror: string;
  databaseUrl: string;
  admin: Admin;
  hosts: LocalFleetHost[];
  gateways: { url: string; child: ChildProcess }[];
  store: Store;
  ownerOf(
    tenantId: string,
  ): Promise<(Awaited<ReturnType<Store['getPlacement']>> & { host: LocalFleetHost | undefined }) | undefined>;
  stop(): Promise<void>;
}

export function startLocalFleet<
  Admin,
  Store extends { getPlacement(tenantId: string): Promise<unknown>; close(): Promise<void> },
>(options: {
  dir: string;
  hosts: number;
  gatewayPorts: number[];
  tenantId: string;
  modules: {
    startPostgres(): Promise<{ connectionString: string; stop(): Promise<void> }>;
    bootstrap(options: { dataDir: string; tenantId: string; databaseUrl: string }): Promise<Admin>;
    controlPaths(dataDir: string): { internalToken: string; certificateAuthority: string };
    openPostgresControlStore(url: string): Promise<Store>;
  };
  mains: { host: string; gateway: string };
  nodeArgs?: string[];
  stdio?: IOType | number;
  env?: Record<string, string>;
}): Promise<LocalFleet<Admin, Store>>;
