// Reads infra/terraform's HCL as JSON (@cdktf/hcl2json: HashiCorp's own parser built to WebAssembly),
// so the AWS modules, which cannot be planned here without the provider, are still checked.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { convertFiles, parse } from '@cdktf/hcl2json';

export const terraformDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const repoRoot = path.resolve(terraformDir, '..', '..');

/** A block as hcl2json gives it: attributes, nested blocks as arrays. */
export type Block = Record<string, unknown>;

export interface Module {
  resource: Record<string, Record<string, Block[]>>;
  data: Record<string, Record<string, Block[]>>;
  module: Record<string, Block[]>;
  variable: Record<string, Block[]>;
  output: Record<string, Block[]>;
  locals: Block[];
}

/** Every .tf file of infra/terraform/<dir>, merged. */
export async function loadModule(dir: string): Promise<Module> {
  const json = await convertFiles(path.join(terraformDir, dir));
  return {
    resource: {},
    data: {},
    module: {},
    variable: {},
    output: {},
    locals: [],
    ...json,
  } as Module;
}

/** One .tf file. */
export async function loadFile(file: string): Promise<Module> {
  const json = await parse(file, readFileSync(path.join(terraformDir, file), 'utf8'));
  return { resource: {}, data: {}, module: {}, variable: {}, output: {}, locals: [], ...json } as Module;
}

/** The single block `type.name` of a module's resources (or data sources), failing clearly when absent. */
export function only(blocks: Record<string, Record<string, Block[]>>, type: string, name: string): Block {
  const found = blocks[type]?.[name];
  if (found?.length !== 1) throw new Error(`expected exactly one ${type}.${name}`);
  return found[0] as Block;
}

/** The single `variable` (or `module` call) block `name` of a module. */
export function single(blocks: Record<string, Block[]>, name: string): Block {
  const found = blocks[name];
  if (found?.length !== 1) throw new Error(`expected exactly one block named ${name}`);
  return found[0] as Block;
}

/** The first nested block of a block (`health_check`, `metadata_options`…). */
export function nested(block: Block, key: string): Block {
  const value = block[key];
  if (!Array.isArray(value) || value.length === 0) throw new Error(`no ${key} block`);
  return value[0] as Block;
}

/** Every local of a module, merged across its locals blocks. */
export function locals(module: Module): Block {
  return Object.assign({}, ...module.locals);
}

/** How hcl2json writes an expression attribute: `ref('var.x')` is the text "${var.x}". */
export function ref(expression: string): string {
  return `\${${expression}}`;
}
