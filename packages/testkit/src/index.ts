export { spawnTs, tsNodeArgs, untilReady, waitForExit } from './child-process.js';
export {
  findPostgresBin,
  type PostgresServer,
  type StartPostgresOptions,
  startPostgres,
} from './postgres.js';
export { makeTempDir } from './temp-dir.js';
