// The keys of the suggestion structure (suggest-store.ts): a term's deletion
// variants, SymSpell's way. Pure functions.
//
// Why this is exact: if the optimal-string-alignment distance of two terms is
// at most k, deleting at most k characters from each gives one common string
// (a substitution or a transposition is one deletion on each side, an
// insertion or a deletion one on one side). It stays true for their first P
// characters: in the alignment's matched pairs, those inside both prefixes are
// a prefix of the matches, so each side deletes only what it has unmatched in
// its prefix, at most k. So looking up the query's variants among the stored
// variants of every term finds every term within k, and the distance is then
// computed on whole terms to drop the others.

/**
 * Variants are made from the first PREFIX code points of a term only: a term
 * of any length then has at most 1 + 7 + 21 = 29 variants at two edits,
 * instead of about L²/2 (SymSpell's "prefix length", with its default).
 */
export const VARIANT_PREFIX = 7;

/** Variants are stored for two edits, the most `suggest` ever allows by default (see defaultMaxDistance). */
export const STORED_EDITS = 2;

/**
 * The distinct strings made by deleting at most `edits` code points from the
 * term's first VARIANT_PREFIX code points, the prefix itself included.
 */
export function deletionVariants(term: string, edits: number): string[] {
  const chars = Array.from(term);
  const prefix = chars.length > VARIANT_PREFIX ? chars.slice(0, VARIANT_PREFIX).join('') : term;
  const seen = new Set<string>([prefix]);
  // Without surrogate pairs a code point is a code unit and slicing the string is enough (the common case,
  // and about twice as fast as arrays of characters); otherwise work on code points.
  const bmp = prefix.length === Math.min(chars.length, VARIANT_PREFIX);
  let level: string[] = [prefix];
  for (let e = 0; e < edits; e++) {
    const next: string[] = [];
    for (const text of level) {
      const units = bmp ? null : Array.from(text);
      const length = units ? units.length : text.length;
      for (let i = 0; i < length; i++) {
        const shorter = units
          ? units.slice(0, i).join('') + units.slice(i + 1).join('')
          : text.slice(0, i) + text.slice(i + 1);
        if (seen.has(shorter)) continue;
        seen.add(shorter);
        next.push(shorter);
      }
    }
    level = next;
  }
  return [...seen];
}
