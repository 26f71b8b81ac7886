// envs/aws is the one root module of every AWS environment: an environment (envs/prod, envs/staging, the
// names the issue uses) is a directory of a tfvars, a backend example and a README, not a copy of the root
// module. These assertions keep it that way and keep the operator's example complete.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from '@cdktf/hcl2json';
import { describe, expect, it } from 'vitest';
import { loadModule, ref, single, terraformDir } from './hcl.js';

const envsDir = path.join(terraformDir, 'envs');

/** A tfvars (or backend) file under envs/, parsed: `dir/file`. */
async function tfvars(file: string): Promise<Record<string, unknown>> {
  return (await parse(file, readFileSync(path.join(envsDir, file), 'utf8'))) as Record<string, unknown>;
}

describe('envs: one root module for AWS, one tfvars per environment', async () => {
  const root = await loadModule('envs/aws');
  const environments = readdirSync(envsDir)
    .filter((d) => d !== 'aws' && d !== 'local')
    .sort();

  it('the environments are envs/prod and envs/staging: their own files only, no configuration of their own', () => {
    expect(environments).toEqual(['prod', 'staging']);
    for (const env of environments) {
      expect(readdirSync(path.join(envsDir, env)).sort()).toEqual([
        'README.md',
        'backend.hcl.example',
        `${env}.tfvars`,
      ]);
      // How to run the shared root with them, in the README.
      expect(readFileSync(path.join(envsDir, env, 'README.md'), 'utf8')).toContain(
        `tofu -chdir=../aws plan -var-file=../${env}/${env}.tfvars -var-file=../${env}/${env}.operator.tfvars`,
      );
    }
    // envs/local (no provider) is the only other root module, and envs/aws holds no environment's values.
    expect(readdirSync(path.join(envsDir, 'aws')).filter((f) => f.endsWith('.tfvars'))).toEqual([]);
  });

  it("each environment's backend example keys its own state", async () => {
    for (const env of environments) {
      const backend = await tfvars(`${env}/backend.hcl.example`);
      expect(backend.key).toBe(`rookery/${env}.tfstate`);
      expect(backend.use_lockfile).toBe(true);
    }
  });

  it('each <env>.tfvars names its own environment and sizes its tenants, and nothing an operator supplies', async () => {
    for (const env of environments) {
      const values = await tfvars(`${env}/${env}.tfvars`);
      expect(values.environment).toBe(env);
      expect(typeof values.tenants).toBe('number');
      expect(Object.keys(values).sort()).toEqual(['environment', 'tenants']);
    }
    expect((await tfvars('prod/prod.tfvars')).tenants).toBe(2000);
    expect((await tfvars('staging/staging.tfvars')).tenants).toBe(200);
  });

  it("every input without a default is in an environment's tfvars or the operator's example", async () => {
    const example = Object.keys(await tfvars('aws/operator.tfvars.example'));
    const required = Object.entries(root.variable)
      .filter(([, blocks]) => !('default' in (blocks[0] ?? {})))
      .map(([name]) => name);
    for (const name of required) expect(['environment', 'tenants', ...example]).toContain(name);
  });

  it('the deployment gets every root input, under its own name', () => {
    const call = single(root.module, 'rookery');
    expect(call.source).toBe('../../modules/deployment');
    for (const name of Object.keys(root.variable)) expect(call[name]).toBe(ref(`var.${name}`));
  });
});
