import { isDeepStrictEqual } from 'node:util';
import {
  assertNestingWithin,
  MAX_JSON_DEPTH,
  type Patch,
  type PatchOperation,
  RookeryError,
} from '@rookery/protocol';

type Json = Record<string, unknown>;

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(id: string, message: string): never {
  throw new RookeryError('InvalidPatch', `Cannot patch ${id}: ${message}`, { id });
}

/** Applies a patch to a copy of `doc` (the document including its `@metadata`) and returns the copy. */
export function applyPatch(id: string, doc: Json, patch: Patch): Json {
  // structuredClone is recursive: a document stored before depth was limited could overflow the stack here.
  assertNestingWithin(doc, MAX_JSON_DEPTH, `Document ${id} (stored before documents were limited in depth)`);
  const copy = structuredClone(doc);
  if ('Merge' in patch) return mergePatch(id, copy, patch.Merge);
  for (const op of patch.Operations) applyOperation(id, copy, op);
  return copy;
}

/** RFC 7396 JSON merge patch: null removes, objects merge recursively, everything else replaces. */
function mergePatch(id: string, target: Json, patch: Json): Json {
  for (const [key, value] of Object.entries(patch)) {
    if (FORBIDDEN_KEYS.has(key)) fail(id, `the key "${key}" is not allowed`);
    if (value === null) {
      delete target[key];
    } else if (isObject(value)) {
      const current = target[key];
      target[key] = mergePatch(id, isObject(current) ? current : {}, value);
    } else {
      target[key] = value;
    }
  }
  return target;
}

/** Walks to the parent of the path's last segment, creating objects on the way when `create` is set. */
function locate(
  id: string,
  doc: Json,
  path: string,
  create: boolean,
): { parent: Json | unknown[]; key: string } | null {
  const segments = path.split('.');
  let node: Json | unknown[] = doc;
  for (let i = 0; i < segments.length - 1; i++) {
    const segment = segments[i]!;
    const next: unknown = Array.isArray(node) ? node[Number(segment)] : node[segment];
    if (isObject(next) || Array.isArray(next)) {
      node = next;
    } else if (next === undefined && create && !Array.isArray(node)) {
      const fresh: Json = {};
      node[segment] = fresh;
      node = fresh;
    } else if (next === undefined) {
      return null;
    } else {
      fail(id, `"${segments.slice(0, i + 1).join('.')}" is a ${typeof next}, not an object`);
    }
  }
  return { parent: node, key: segments[segments.length - 1]! };
}

function read(container: Json | unknown[], key: string): unknown {
  return Array.isArray(container) ? container[Number(key)] : container[key];
}

function write(id: string, container: Json | unknown[], key: string, value: unknown): void {
  if (Array.isArray(container)) {
    const index = Number(key);
    if (!Number.isInteger(index) || index < 0 || index > container.length) {
      fail(id, `"${key}" is not a valid index into an array of ${container.length} items`);
    }
    container[index] = value;
  } else {
    container[key] = value;
  }
}

function applyOperation(id: string, doc: Json, op: PatchOperation): void {
  switch (op.Op) {
    case 'set': {
      const at = locate(id, doc, op.Path, true)!;
      write(id, at.parent, at.key, op.Value);
      return;
    }
    case 'unset': {
      const at = locate(id, doc, op.Path, false);
      if (!at) return;
      if (Array.isArray(at.parent)) at.parent.splice(Number(at.key), 1);
      else delete at.parent[at.key];
      return;
    }
    case 'increment': {
      const at = locate(id, doc, op.Path, true)!;
      const current = read(at.parent, at.key) ?? 0;
      if (typeof current !== 'number')
        fail(id, `"${op.Path}" holds a ${typeof current}; only numbers can be incremented`);
      write(id, at.parent, at.key, current + op.By);
      return;
    }
    case 'append': {
      const at = locate(id, doc, op.Path, true)!;
      const current = read(at.parent, at.key) ?? [];
      if (!Array.isArray(current)) fail(id, `"${op.Path}" is not an array, so nothing can be appended to it`);
      current.push(op.Value);
      write(id, at.parent, at.key, current);
      return;
    }
    case 'remove': {
      const at = locate(id, doc, op.Path, false);
      if (!at) return;
      const current = read(at.parent, at.key);
      if (current === undefined) return;
      if (!Array.isArray(current))
        fail(id, `"${op.Path}" is not an array, so nothing can be removed from it`);
      write(
        id,
        at.parent,
        at.key,
        current.filter((item) => !isDeepStrictEqual(item, op.Value)),
      );
      return;
    }
  }
}
