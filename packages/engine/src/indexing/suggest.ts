// "Did you mean": rank terms of an index's vocabulary by how close they are to
// a term that found little or nothing. Pure functions; fetching candidates from
// the index (see candidatePrefixes) is the caller's business.

export interface SuggestionCandidate {
  term: string;
  /** How many documents contain the term: the tie-breaker between equally close terms. */
  docs: number;
}

export interface Suggestion {
  term: string;
  /** Damerau–Levenshtein distance (optimal string alignment) to the searched term. */
  distance: number;
  docs: number;
}

export interface RankSuggestionsOptions {
  /** How many suggestions at most (default 5). */
  max?: number;
  /** The largest distance suggested (default 2 for terms of 5 characters or more, 1 for shorter ones). */
  maxDistance?: number;
}

/** The default largest distance: one edit for short terms, where two edits reach too many words. */
export function defaultMaxDistance(term: string): number {
  return codePointLength(term) >= 5 ? 2 : 1;
}

/**
 * The closest candidates to `term`, nearest first: by distance ascending, then
 * documents descending, then term (code-unit order). The distance is the
 * optimal-string-alignment variant of Damerau–Levenshtein: insertions,
 * deletions, substitutions and transpositions of adjacent characters all cost
 * 1 (no substring is edited twice). Characters are Unicode code points and the
 * comparison is case-sensitive: pass terms normalised the way the index
 * normalises them. The term itself is never suggested.
 *
 * Cost: one pass over the candidates; a candidate whose length differs by more
 * than the allowed distance is skipped without any work, and a distance
 * computation stops as soon as a whole row of the table exceeds the allowed
 * distance. Once `max` suggestions are held, the allowed distance shrinks to
 * the worst of them. The three rows of the table and the candidate's code
 * points live in buffers allocated once per call.
 */
export function rankSuggestions(
  term: string,
  candidates: Iterable<SuggestionCandidate>,
  options: RankSuggestionsOptions = {},
): Suggestion[] {
  const max = Math.floor(options.max ?? 5);
  const maxDistance = Math.floor(options.maxDistance ?? defaultMaxDistance(term));
  if (term.length === 0 || !(max >= 1) || !(maxDistance >= 1)) return [];

  const source = Int32Array.from(codePoints(term));
  const width = source.length + 1;
  const rows = new Int32Array(3 * width);
  let target = new Int32Array(Math.max(16, 2 * source.length));
  const best: Suggestion[] = []; // sorted, at most `max`

  for (const candidate of candidates) {
    if (candidate.term === term) continue;
    // The allowed distance: once `max` suggestions are held, nothing farther than the worst can enter.
    const limit = best.length === max ? best[max - 1]!.distance : maxDistance;
    // Cheap length bound before decoding: every UTF-16 code unit is at most one code point.
    if (candidate.term.length < source.length - limit) continue;
    if (candidate.term.length > target.length) target = new Int32Array(2 * candidate.term.length);
    const length = fillCodePoints(candidate.term, target);
    if (Math.abs(length - source.length) > limit) continue;
    const distance = boundedOsaDistance(source, target, length, limit, rows);
    if (distance > limit) continue;
    insertRanked(best, { term: candidate.term, distance, docs: candidate.docs }, max);
  }
  return best;
}

/** -1 if a ranks before b. */
function compareSuggestions(a: Suggestion, b: Suggestion): number {
  if (a.distance !== b.distance) return a.distance - b.distance;
  if (a.docs !== b.docs) return b.docs - a.docs;
  if (a.term === b.term) return 0;
  return a.term < b.term ? -1 : 1;
}

function insertRanked(best: Suggestion[], suggestion: Suggestion, max: number): void {
  let at = best.length;
  while (at > 0 && compareSuggestions(suggestion, best[at - 1]!) < 0) at--;
  if (at >= max) return;
  best.splice(at, 0, suggestion);
  if (best.length > max) best.pop();
}

/**
 * OSA distance between `source` and the first `length` code points of
 * `target`, or `limit + 1` as soon as it is known to exceed `limit`. The table
 * has one row per target character; only the last three rows are kept, in
 * `rows` (3 × (source.length + 1)), reused from call to call.
 *
 * The cut-off is sound: the smallest value of a row never decreases from one
 * row to the next (an insertion, deletion or substitution adds 0 or 1 to a cell
 * of the previous row; a transposition d[i-2][j-2] + 1 is never below
 * d[i-1][j-1], itself in the previous row).
 */
function boundedOsaDistance(
  source: Int32Array,
  target: Int32Array,
  length: number,
  limit: number,
  rows: Int32Array,
): number {
  const n = source.length;
  if (length === 0) return n;
  if (n === 0) return length;
  const width = n + 1;
  // Row offsets into `rows`: two rows back, the previous row, the current row.
  let back2 = 0;
  let back1 = width;
  let current = 2 * width;
  for (let j = 0; j <= n; j++) rows[back1 + j] = j;
  for (let i = 1; i <= length; i++) {
    const t = target[i - 1]!;
    const tPrevious = i > 1 ? target[i - 2]! : -1;
    rows[current] = i;
    let rowMin = i;
    for (let j = 1; j <= n; j++) {
      const s = source[j - 1]!;
      const substitution = rows[back1 + j - 1]! + (s === t ? 0 : 1);
      const deletion = rows[back1 + j]! + 1;
      const insertion = rows[current + j - 1]! + 1;
      let value = Math.min(substitution, deletion);
      if (insertion < value) value = insertion;
      if (i > 1 && j > 1 && s === tPrevious && source[j - 2] === t && s !== t) {
        const transposition = rows[back2 + j - 2]! + 1;
        if (transposition < value) value = transposition;
      }
      rows[current + j] = value;
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > limit) return limit + 1;
    const recycled = back2;
    back2 = back1;
    back1 = current;
    current = recycled;
  }
  return rows[back1 + n]!;
}

function* codePoints(text: string): Generator<number> {
  for (const char of text) yield char.codePointAt(0)!;
}

/** Writes the code points of `text` into `buffer` (which has room for text.length) and returns how many. */
function fillCodePoints(text: string, buffer: Int32Array): number {
  let count = 0;
  for (let k = 0; k < text.length; k++) {
    const code = text.codePointAt(k)!;
    buffer[count++] = code;
    if (code > 0xffff) k++;
  }
  return count;
}

/** How many code points `text` has (the unit of the distance; a lone surrogate counts as one). */
export function codePointLength(text: string): number {
  let count = 0;
  for (let k = 0; k < text.length; k++) {
    count++;
    if (text.codePointAt(k)! > 0xffff) k++;
  }
  return count;
}

/**
 * The prefixes whose terms an index vocabulary should be asked for as
 * candidates for `term` (a lexicographic range scan per prefix, then
 * rankSuggestions over the union): the first character, and for terms of 5
 * characters or more also the first two swapped (`qjuery` → `jquery`).
 *
 * The trade-off is recall against work. Scanning the whole vocabulary finds
 * every term within the distance but costs a distance computation per term;
 * fixing the first character cuts the candidates by roughly the alphabet
 * size, and the bounded distance rejects most of them after a character or
 * two. Typos in the second character (`lndon` → `london`) are common enough
 * that fixing two characters lost too many. What is missed: a wrong, missing
 * or extra first character (`query` → `jquery`).
 */
export function candidatePrefixes(term: string): string[] {
  const chars = Array.from(term);
  const [first, second] = chars;
  if (first === undefined) return [];
  if (chars.length < 5 || second === undefined || second === first) return [first];
  return [first, second + first];
}
