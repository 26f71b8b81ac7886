import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root directory. */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** This package's directory. */
export const packageDir = path.join(repoRoot, 'loadtests');
/** k6 scripts. */
export const k6ScriptsDir = path.join(packageDir, 'k6');
/** Run outputs (gitignored): k6 summaries, raw samples, charts. */
export const resultsDir = path.join(packageDir, 'results');
/** Generated datasets, kept between runs (gitignored): the same seed and size give the same file. */
export const dataCacheDir = path.join(packageDir, '.data');
/** Tools the suite installs for itself (gitignored): k6. */
export const toolsBinDir = path.join(repoRoot, '.tools', 'bin');
