// Types of tools.mjs for the TypeScript callers (loadtests/).
export function findGo(): string | null;
