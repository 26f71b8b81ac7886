export { spawnTs, tsNodeArgs, waitForExit } from './child-process.js';
export { makeTempDir } from './temp-dir.js';
