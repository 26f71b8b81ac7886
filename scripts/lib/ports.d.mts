// Types of ports.mjs for the TypeScript callers (infra/terraform/test).
export interface PortEntry {
  name: string;
  variable: string;
  host: string;
  port: string;
}
export function firstPortInUse(ports: readonly PortEntry[]): Promise<(PortEntry & { code: string }) | null>;
export function describePortInUse(entry: PortEntry & { code: string }): string;
