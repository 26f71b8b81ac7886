// Types of infra-tools.mjs for the TypeScript callers (infra/terraform/test).
export const toolsDir: string;
export const toolsBinDir: string;
export const terraformDir: string;
export const TOFU_VERSION: string;
export function infraEnv(base?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
/** `.tools/bin/tofu` at TOFU_VERSION, built first (with Go) if missing or another version. */
export function ensureTofu(): string;
export function ensureTflint(): string;
export function ensureCheckov(): string;
