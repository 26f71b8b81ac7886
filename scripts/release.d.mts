// Types of release.mjs for the TypeScript callers (infra/terraform/test's local fleet).
export const RELEASE_SERVICES: readonly string[];
export function buildRelease(options?: { outDir?: string; build?: boolean }): {
  tarball: string;
  sha256: string;
  bytes: number;
};
