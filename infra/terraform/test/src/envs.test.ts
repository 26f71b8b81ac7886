// envs/aws is the one root module of every AWS environment: an environment is a tfvars file, not a copy
// of the root module. These assertions keep it that way and keep the operator's example complete.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from '@cdktf/hcl2json';
import { describe, expect, it } from 'vitest';
import { loadModule, ref, single, terraformDir } from './hcl.js';

const envsDir = path.join(terraformDir, 'envs');

async function tfvars(file: string): Promise<Record<string, unknown>> {
  return (await parse(file, readFileSync(path.join(envsDir, 'aws', file), 'utf8'))) as Record<
    string,
    unknown
  >;
}

describe('envs: one root module for AWS, one tfvars per environment', async () => {
  const root = await loadModule('envs/aws');
  const environments = readdirSync(path.join(envsDir, 'aws'))
    .filter((f) => /^[a-z]+\.tfvars$/.test(f))
    .map((f) => f.replace(/\.tfvars$/, ''))
    .sort();

  it('the environments are prod and staging, each a tfvars of envs/aws; no other root module holds a provider', () => {
    expect(environments).toEqual(['prod', 'staging']);
    // envs/local (no provider) is the only other root module.
    expect(readdirSync(envsDir).sort()).toEqual(['aws', 'local']);
  });

  it('each <env>.tfvars names its own environment and sizes its tenants, and nothing an operator supplies', async () => {
    for (const env of environments) {
      const values = await tfvars(`${env}.tfvars`);
      expect(values.environment).toBe(env);
      expect(typeof values.tenants).toBe('number');
      expect(Object.keys(values).sort()).toEqual(['environment', 'tenants']);
    }
    expect((await tfvars('prod.tfvars')).tenants).toBe(2000);
    expect((await tfvars('staging.tfvars')).tenants).toBe(200);
  });

  it("every input without a default is in an environment's tfvars or the operator's example", async () => {
    const example = Object.keys(await tfvars('operator.tfvars.example'));
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
