import type { SourcePosition, SourceRange } from './ast.js';
import { quoteSnippet, RqlSyntaxError } from './errors.js';
import { Lexer, type Token } from './lexer.js';
import { MAX_NESTING_DEPTH } from './limits.js';
import type { SourceText } from './source-text.js';

/** How a token reads in an error message: `'name'`, `string 'x'`, `end of input`. */
export function describeToken(token: Token, source: SourceText): string {
  if (token.kind === 'end') return 'end of input';
  const raw = source.text.slice(token.start, token.end);
  return token.kind === 'string' ? `string ${quoteSnippet(raw.slice(1, -1))}` : quoteSnippet(raw);
}

/**
 * The parser's view of the tokens: lookahead, keyword and punctuation tests, and
 * the bookkeeping behind error messages.
 *
 * Every test that fails at the current token (`acceptKeyword('where')`, `note('a
 * field name')`, ...) records what it was looking for; consuming a token clears
 * the record. When the parser gives up, `fail()` reports everything that was tried
 * at that token, so a message lists all the alternatives that would have worked.
 */
export class TokenStream {
  private readonly lexer: Lexer;
  private readonly lookahead: Token[] = [];
  private previous: Token | undefined;
  private beforePrevious: Token | undefined;
  private expected: string[] = [];
  private depth = 0;

  constructor(readonly source: SourceText) {
    this.lexer = new Lexer(source);
  }

  peek(ahead = 0): Token {
    while (this.lookahead.length <= ahead) this.lookahead.push(this.lexer.next());
    return this.lookahead[ahead]!;
  }

  /** The most recently consumed token. */
  get last(): Token {
    if (this.previous === undefined) throw new Error('no token consumed yet');
    return this.previous;
  }

  advance(): Token {
    const token = this.peek();
    if (token.kind !== 'end') this.lookahead.shift();
    this.beforePrevious = this.previous;
    this.previous = token;
    this.expected = [];
    return token;
  }

  /** Records an alternative for the error message, should the current token be rejected. */
  note(description: string): void {
    if (!this.expected.includes(description)) this.expected.push(description);
  }

  /** Tests without recording anything (for lookahead decisions). */
  isKeyword(word: string, ahead = 0): boolean {
    const token = this.peek(ahead);
    return token.kind === 'identifier' && token.value.toLowerCase() === word;
  }

  isPunctuation(char: string, ahead = 0): boolean {
    const token = this.peek(ahead);
    return token.kind === 'punctuation' && token.value === char;
  }

  acceptKeyword(word: string): Token | undefined {
    if (this.isKeyword(word)) return this.advance();
    this.note(`'${word}'`);
    return undefined;
  }

  expectKeyword(word: string): Token {
    return this.acceptKeyword(word) ?? this.fail();
  }

  acceptPunctuation(char: string): Token | undefined {
    if (this.isPunctuation(char)) return this.advance();
    this.note(`'${char}'`);
    return undefined;
  }

  expectPunctuation(char: string): Token {
    return this.acceptPunctuation(char) ?? this.fail();
  }

  /** Throws at the current token, listing everything tried there plus `alsoExpected`. */
  fail(...alsoExpected: string[]): never {
    for (const description of alsoExpected) this.note(description);
    const token = this.peek();
    throw new RqlSyntaxError({
      position: this.source.positionAt(token.start),
      expected: [...this.expected],
      found: describeToken(token, this.source),
      ...(this.previous === undefined ? {} : { after: describeToken(this.previous, this.source) }),
    });
  }

  /** Throws about something already consumed, at `position`. */
  failAt(position: SourcePosition, expected: string[], found: string, after?: Token): never {
    throw new RqlSyntaxError({
      position,
      expected,
      found,
      ...(after === undefined ? {} : { after: describeToken(after, this.source) }),
    });
  }

  /** Throws about the token just consumed. */
  failAtLast(expected: string[]): never {
    const token = this.last;
    this.failAt(
      this.source.positionAt(token.start),
      expected,
      describeToken(token, this.source),
      this.beforePrevious,
    );
  }

  /** Enters one level of nesting; refuses to go deeper than `MAX_NESTING_DEPTH`. */
  enter(): void {
    this.depth++;
    if (this.depth > MAX_NESTING_DEPTH) {
      const token = this.peek();
      this.failAt(
        this.source.positionAt(token.start),
        [`at most ${MAX_NESTING_DEPTH} levels of nesting`],
        `${describeToken(token, this.source)} nested ${this.depth} levels deep`,
      );
    }
  }

  leave(): void {
    this.depth--;
  }

  /** The range from `start` (an offset) to the end of the last consumed token. */
  rangeFrom(start: number): SourceRange {
    return this.source.range(start, this.last.end);
  }
}
