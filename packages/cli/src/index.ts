// @rookery/cli: the `rookery` admin command, and `bootstrap` for `npm start`.
export { type BootstrapOptions, type BootstrapResult, bootstrap } from './bootstrap.js';
export { buildProgram, runCli } from './cli.js';
export type { CliIo } from './output.js';
