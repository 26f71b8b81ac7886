import type { SourcePosition } from './ast.js';

export interface RqlSyntaxErrorInit {
  /** Where the problem is: usually the start of the unexpected token. */
  position: SourcePosition;
  /** What would have been accepted there, e.g. `'by'`, `a field name`, `end of input`. */
  expected: string[];
  /** What is there instead, e.g. `'name'`, `string 'x'`, `end of input`. */
  found: string;
  /** What came just before, e.g. `'order'`; adds "after ..." to the message. */
  after?: string;
}

/**
 * A query that is not valid RQL. `code` is the stable error code clients branch on;
 * the message reads like `line 2, column 7: expected 'by' after 'order' but found 'name'`.
 */
export class RqlSyntaxError extends Error {
  override readonly name = 'RqlSyntaxError';
  readonly code = 'InvalidQuery' as const;
  /** 0-based offset into the query text (UTF-16 code units), at most the text length. */
  readonly offset: number;
  /** 1-based. */
  readonly line: number;
  /** 1-based, in UTF-16 code units. */
  readonly column: number;
  /** Everything that would have been accepted at this point, in the order the parser tried them. */
  readonly expected: string[];
  readonly found: string;

  constructor(init: RqlSyntaxErrorInit) {
    const { position, expected, found, after } = init;
    const afterText = after === undefined ? '' : ` after ${after}`;
    super(
      `line ${position.line}, column ${position.column}: expected ${listAlternatives(expected)}${afterText} but found ${found}`,
    );
    this.offset = position.offset;
    this.line = position.line;
    this.column = position.column;
    this.expected = expected;
    this.found = found;
  }
}

/** `a`, `a or b`, `a, b or c`. */
export function listAlternatives(items: readonly string[]): string {
  if (items.length === 0) return 'something else';
  if (items.length === 1) return items[0]!;
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

const MAX_SHOWN = 32;

/** Source text as it appears in a message: quoted, control characters escaped, shortened if long. */
export function quoteSnippet(text: string): string {
  let shown = text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: escaping control characters is the point
  shown = shown.replace(/[\u0000-\u001f\u007f]/g, (char) => {
    if (char === '\n') return '\\n';
    if (char === '\r') return '\\r';
    if (char === '\t') return '\\t';
    return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
  return `'${shown}'`;
}
