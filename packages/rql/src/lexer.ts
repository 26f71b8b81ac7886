import { quoteSnippet, RqlSyntaxError } from './errors.js';
import { isIdentifierPart, isIdentifierStart, isParameterPart } from './identifiers.js';
import type { SourceText } from './source-text.js';

export type TokenKind =
  | 'identifier' // Orders, @metadata, from (keywords are identifiers; the parser decides)
  | 'string' // 'text' or "text"; value holds the decoded text
  | 'number' // 42, -1.5, 1e3, 10_000; value holds the spelling
  | 'parameter' // $name; value holds the name without `$`
  | 'punctuation' // ( ) , . [ ]
  | 'operator' // = == != <> < <= > >=
  | 'unknown' // any other character; never accepted by the parser, so it reports it
  | 'end';

export interface Token {
  kind: TokenKind;
  value: string;
  /** Offsets into the source: `[start, end)`. */
  start: number;
  end: number;
}

const PUNCTUATION = new Set(['(', ')', ',', '.', '[', ']']);
const TWO_CHAR_OPERATORS = new Set(['==', '!=', '<>', '<=', '>=']);
const ONE_CHAR_OPERATORS = new Set(['=', '<', '>']);

const ESCAPES: Readonly<Record<string, string>> = {
  "'": "'",
  '"': '"',
  '\\': '\\',
  t: '\t',
  n: '\n',
  r: '\r',
  f: '\f',
  b: '\b',
};
const ESCAPE_LIST = ["\\'", '\\"', '\\\\', '\\t', '\\n', '\\r', '\\f', '\\b'];

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/**
 * Turns query text into tokens on demand. Skips whitespace, `// line` and
 * `/* block *\/` comments. Throws `RqlSyntaxError` for an unterminated string or
 * comment and for an unknown escape; any other stray character becomes an
 * `unknown` token so the parser can say what it expected instead.
 */
export class Lexer {
  private position = 0;

  constructor(private readonly source: SourceText) {}

  private get text(): string {
    return this.source.text;
  }

  next(): Token {
    this.skipWhitespaceAndComments();
    const text = this.text;
    const start = this.position;
    if (start >= text.length) return { kind: 'end', value: '', start, end: start };

    const char = text[start]!;
    const code = text.charCodeAt(start);

    if (char === "'" || char === '"') return this.readString(char);
    if (isDigit(code) || (char === '-' && isDigit(text.charCodeAt(start + 1)))) return this.readNumber();
    if (char === '$' && this.isParameterPartAt(start + 1)) return this.readParameter();
    if (char === '@' && this.isIdentifierPartAt(start + 1)) return this.readIdentifier(start + 1);
    const codePoint = this.codePointAt(start);
    if (isIdentifierStart(codePoint)) return this.readIdentifier(start + codePoint.length);

    const pair = text.slice(start, start + 2);
    if (TWO_CHAR_OPERATORS.has(pair)) return this.token('operator', pair, start, start + 2);
    if (ONE_CHAR_OPERATORS.has(char)) return this.token('operator', char, start, start + 1);
    if (PUNCTUATION.has(char)) return this.token('punctuation', char, start, start + 1);
    return this.token('unknown', codePoint, start, start + codePoint.length);
  }

  private token(kind: TokenKind, value: string, start: number, end: number): Token {
    this.position = end;
    return { kind, value, start, end };
  }

  /** The whole code point at `offset` (one or two UTF-16 code units). */
  private codePointAt(offset: number): string {
    const code = this.text.charCodeAt(offset);
    if (code < 0xd800 || code > 0xdbff) return this.text.charAt(offset);
    return String.fromCodePoint(this.text.codePointAt(offset) ?? code);
  }

  private isIdentifierPartAt(offset: number): boolean {
    return offset < this.text.length && isIdentifierPart(this.codePointAt(offset));
  }

  private isParameterPartAt(offset: number): boolean {
    return offset < this.text.length && isParameterPart(this.codePointAt(offset));
  }

  private skipWhitespaceAndComments(): void {
    const text = this.text;
    while (this.position < text.length) {
      const char = text[this.position]!;
      if (char === ' ' || char === '\n' || char === '\r' || char === '\t' || /\s/.test(char)) {
        this.position++;
      } else if (char === '/' && text[this.position + 1] === '/') {
        while (this.position < text.length && text[this.position] !== '\n' && text[this.position] !== '\r') {
          this.position++;
        }
      } else if (char === '/' && text[this.position + 1] === '*') {
        const close = text.indexOf('*/', this.position + 2);
        if (close < 0) {
          throw this.error(this.position, ["'*/' to close the comment that starts here"], 'end of input');
        }
        this.position = close + 2;
      } else {
        return;
      }
    }
  }

  private readIdentifier(from: number): Token {
    const start = this.position;
    let end = from;
    while (this.isIdentifierPartAt(end)) end += this.codePointAt(end).length;
    return this.token('identifier', this.text.slice(start, end), start, end);
  }

  private readParameter(): Token {
    const start = this.position;
    let end = start + 1;
    while (this.isParameterPartAt(end)) end += this.codePointAt(end).length;
    return this.token('parameter', this.text.slice(start + 1, end), start, end);
  }

  /**
   * `-?digits(.digits)?([eE][+-]?digits)?`; a plain integer may use `_` between
   * digits (`10_000`), as in RavenDB. A fraction or exponent is only taken when digits follow.
   */
  private readNumber(): Token {
    const text = this.text;
    const start = this.position;
    let end = start;
    if (text[end] === '-') end++;
    while (isDigit(text.charCodeAt(end)) || text[end] === '_') end++;
    const hasUnderscore = text.slice(start, end).includes('_');
    if (!hasUnderscore && text[end] === '.' && isDigit(text.charCodeAt(end + 1))) {
      end += 2;
      while (isDigit(text.charCodeAt(end))) end++;
    }
    if (!hasUnderscore && (text[end] === 'e' || text[end] === 'E')) {
      let exponent = end + 1;
      if (text[exponent] === '+' || text[exponent] === '-') exponent++;
      if (isDigit(text.charCodeAt(exponent))) {
        end = exponent;
        while (isDigit(text.charCodeAt(end))) end++;
      }
    }
    const raw = text.slice(start, end);
    if (!Number.isFinite(Number(raw.replaceAll('_', '')))) {
      throw this.error(start, ['a number within the range of a double'], quoteSnippet(raw));
    }
    return this.token('number', raw, start, end);
  }

  /**
   * A string in single or double quotes. Inside, the quote is written doubled (`'it''s'`)
   * or escaped (`'it\'s'`); the escapes are RavenDB's: \' \" \\ \t \n \r \f \b.
   * Strings may span lines.
   */
  private readString(quote: string): Token {
    const text = this.text;
    const start = this.position;
    let value = '';
    let i = start + 1;
    while (i < text.length) {
      const char = text[i]!;
      if (char === quote) {
        if (text[i + 1] === quote) {
          value += quote;
          i += 2;
          continue;
        }
        return this.token('string', value, start, i + 1);
      }
      if (char === '\\') {
        const escaped = text[i + 1];
        if (escaped === undefined) break;
        const decoded = ESCAPES[escaped] ?? ESCAPES[escaped.toLowerCase()];
        if (decoded === undefined) {
          throw this.error(
            i,
            [`an escape sequence (${ESCAPE_LIST.join(' ')})`],
            quoteSnippet(`\\${escaped}`),
          );
        }
        value += decoded;
        i += 2;
        continue;
      }
      value += char;
      i++;
    }
    throw this.error(start, [`a closing ${quote} to end the string that starts here`], 'end of input');
  }

  private error(offset: number, expected: string[], found: string): RqlSyntaxError {
    return new RqlSyntaxError({ position: this.source.positionAt(offset), expected, found });
  }
}
