// `npm test`'s infrastructure step (infra/terraform): OpenTofu's formatting, `tofu validate` and
// `tofu test` of every module that needs no provider, tflint's core rules and checkov over every
// module. The AWS modules cannot be validated here (no provider can be downloaded): their promises
// are asserted by the vitest tests in infra/terraform/test, which run with the other packages.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { ensureCheckov, ensureTflint, ensureTofu, infraEnv, terraformDir, toolsDir } from './infra-tools.mjs';

/** Modules with no provider: `tofu test` runs their tests here. */
export const PROVIDER_FREE_MODULES = ['modules/node-config', 'modules/iam-policies', 'modules/sizing'];
/** Root configurations with no provider: validated (the local-fleet test applies envs/local). */
const PROVIDER_FREE_ROOTS = ['envs/local'];

function run(command, args, { cwd = terraformDir, env = infraEnv() } = {}) {
  const result = spawnSync('nice', ['-n', '19', 'ionice', '-c3', command, ...args], {
    cwd,
    env,
    stdio: ['ignore', process.stderr, process.stderr],
  });
  return result.status === 0;
}

/** Runs every check; returns how many passed and failed (each check counts as one test). */
export function runInfraChecks() {
  const outcome = { passed: 0, failed: 0 };
  const check = (name, ok) => {
    outcome[ok ? 'passed' : 'failed'] += 1;
    process.stderr.write(`${ok ? '✓' : '✖'} infra: ${name}\n`);
  };
  const ensure = (name, install) => {
    try {
      return install();
    } catch (error) {
      check(`${name} installed`, false);
      process.stderr.write(`${error.message}\n`);
      return null;
    }
  };

  const tofu = ensure('OpenTofu', ensureTofu);
  if (tofu !== null) {
    check('tofu fmt -check -recursive', run(tofu, ['fmt', '-check', '-recursive', '-diff']));
    for (const dir of [...PROVIDER_FREE_MODULES, ...PROVIDER_FREE_ROOTS]) {
      // Each module's .terraform lives under .tools, so the tree stays clean and runs never share one.
      const dataDir = path.join(toolsDir, 'tofu-data', dir.replaceAll('/', '-'));
      mkdirSync(dataDir, { recursive: true });
      const env = { ...infraEnv(), TF_DATA_DIR: dataDir };
      const cwd = path.join(terraformDir, dir);
      const steps = [
        ['init', '-backend=false', '-input=false', '-no-color'],
        ['validate', '-no-color'],
        ...(PROVIDER_FREE_MODULES.includes(dir) ? [['test', '-no-color']] : []),
      ];
      const ok = steps.every((args) => run(tofu, args, { cwd, env }));
      check(`${dir}: ${steps.map((s) => `tofu ${s[0]}`).join(', ')}`, ok);
    }
  }

  const tflint = ensure('tflint', ensureTflint);
  if (tflint !== null) {
    const config = path.join(terraformDir, '.tflint.hcl');
    check(
      'tflint --recursive (core rules)',
      run(tflint, ['--recursive', `--config=${config}`, '--format=compact']),
    );
  }

  const checkov = ensure('checkov', ensureCheckov);
  if (checkov !== null) {
    check(
      'checkov (every failed check fixed or skipped with its reason beside it)',
      run(checkov, [
        '--directory',
        '.',
        '--framework',
        'terraform',
        '--compact',
        '--quiet',
        '--skip-path',
        'test',
        '--download-external-modules',
        'false',
        // No guideline links or policies from checkov's vendor: the machines here reach no such service.
        '--skip-download',
      ]),
    );
  }
  return outcome;
}

// `node scripts/lib/infra-check.mjs`: the step on its own.
if (process.argv[1] && path.resolve(process.argv[1]) === new URL(import.meta.url).pathname) {
  const started = Date.now();
  const { passed, failed } = runInfraChecks();
  process.stdout.write(
    `\ninfra: ${passed} passed, ${failed} failed (${Math.round((Date.now() - started) / 1000)} s)\n`,
  );
  process.exit(failed > 0 ? 1 : 0);
}
