import type { Unpositioned } from '../ast.js';

/** A deep copy of `node` without any `position`, to compare trees regardless of layout. */
export function stripPositions<T>(node: T): Unpositioned<T> {
  if (Array.isArray(node)) return node.map((item) => stripPositions(item)) as Unpositioned<T>;
  if (node !== null && typeof node === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key !== 'position' && value !== undefined) copy[key] = stripPositions(value);
    }
    return copy as Unpositioned<T>;
  }
  return node as Unpositioned<T>;
}
