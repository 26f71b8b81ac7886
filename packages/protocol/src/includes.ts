/**
 * Collects the ids referenced by an include path: `Employee`, `Address.Ref`,
 * `Lines[].Product` (every element of an array). Values that are not strings
 * are ignored, as RavenDB does.
 *
 * Here because it is what the `include` of a load or a query means on the wire:
 * the server follows it from the documents it reads, and the client from the
 * documents its session already has (to know whether their includes are in
 * hand too), so both must read a path the same way.
 */
export function referencedIds(doc: unknown, path: string): string[] {
  const found: string[] = [];
  collect(doc, path.split('.'), 0, found);
  return found;
}

function collect(node: unknown, segments: string[], at: number, found: string[]): void {
  if (node === null || node === undefined) return;
  if (at === segments.length) {
    if (typeof node === 'string') found.push(node);
    else if (Array.isArray(node)) for (const item of node) if (typeof item === 'string') found.push(item);
    return;
  }
  if (typeof node !== 'object') return;
  const segment = segments[at]!;
  const spread = segment.endsWith('[]');
  const name = spread ? segment.slice(0, -2) : segment;
  const value = Object.hasOwn(node, name) ? (node as Record<string, unknown>)[name] : undefined;
  if (spread) {
    if (Array.isArray(value)) for (const item of value) collect(item, segments, at + 1, found);
  } else {
    collect(value, segments, at + 1, found);
  }
}
