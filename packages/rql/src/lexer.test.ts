import { describe, expect, it } from 'vitest';
import { RqlSyntaxError } from './errors.js';
import { Lexer, type Token } from './lexer.js';
import { SourceText } from './source-text.js';

/** All tokens of `text` as `kind:value`, without the end token. */
function lex(text: string): string[] {
  const lexer = new Lexer(new SourceText(text));
  const tokens: string[] = [];
  for (let token: Token = lexer.next(); token.kind !== 'end'; token = lexer.next()) {
    tokens.push(`${token.kind}:${token.value}`);
  }
  return tokens;
}

function lexError(text: string): RqlSyntaxError {
  try {
    lex(text);
  } catch (error) {
    if (error instanceof RqlSyntaxError) return error;
    throw error;
  }
  throw new Error(`no error lexing ${text}`);
}

describe('lexer', () => {
  it('reads identifiers, including @-prefixed, unicode and hyphenated ones', () => {
    expect(lex('Orders _x a1 @metadata @all_docs Ünïcödé 名前 Order-Lines')).toEqual([
      'identifier:Orders',
      'identifier:_x',
      'identifier:a1',
      'identifier:@metadata',
      'identifier:@all_docs',
      'identifier:Ünïcödé',
      'identifier:名前',
      'identifier:Order-Lines',
    ]);
  });

  it('reads strings in both quotes, with escapes, doubled quotes and line breaks', () => {
    expect(
      lex(`'a' "b" 'it''s' "say ""hi""" 'x\\'y' "\\"" '\\\\' '\\t\\n\\r\\f\\b' '\\T' 'multi\nline' ''`),
    ).toEqual([
      'string:a',
      'string:b',
      "string:it's",
      'string:say "hi"',
      "string:x'y",
      'string:"',
      'string:\\',
      'string:\t\n\r\f\b',
      'string:\t',
      'string:multi\nline',
      'string:',
    ]);
  });

  it('reads numbers: negative, decimal, exponent, digit separators', () => {
    expect(lex('0 42 -7 3.14 -0.5 1e10 2E-3 6.02e+23 10_000')).toEqual([
      'number:0',
      'number:42',
      'number:-7',
      'number:3.14',
      'number:-0.5',
      'number:1e10',
      'number:2E-3',
      'number:6.02e+23',
      'number:10_000',
    ]);
  });

  it('leaves a dangling fraction or exponent to the next token', () => {
    expect(lex('1.x 2e 3.')).toEqual([
      'number:1',
      'punctuation:.',
      'identifier:x',
      'number:2',
      'identifier:e',
      'number:3',
      'punctuation:.',
    ]);
  });

  it('reads parameters, operators and punctuation', () => {
    expect(lex('$p $0 $long_name = == != <> < <= > >= ( ) , . [ ]')).toEqual([
      'parameter:p',
      'parameter:0',
      'parameter:long_name',
      'operator:=',
      'operator:==',
      'operator:!=',
      'operator:<>',
      'operator:<',
      'operator:<=',
      'operator:>',
      'operator:>=',
      'punctuation:(',
      'punctuation:)',
      'punctuation:,',
      'punctuation:.',
      'punctuation:[',
      'punctuation:]',
    ]);
    expect(lex('a>=-1')).toEqual(['identifier:a', 'operator:>=', 'number:-1']);
  });

  it('skips whitespace and both kinds of comments', () => {
    expect(lex('a // to the end\r\nb /* block\n comment */ c//last')).toEqual([
      'identifier:a',
      'identifier:b',
      'identifier:c',
    ]);
  });

  it('turns stray characters into unknown tokens for the parser to report', () => {
    expect(lex('* ; { } ! $ @ - / 😀')).toEqual([
      'unknown:*',
      'unknown:;',
      'unknown:{',
      'unknown:}',
      'unknown:!',
      'unknown:$',
      'unknown:@',
      'unknown:-',
      'unknown:/',
      'unknown:😀',
    ]);
  });

  it('records token offsets', () => {
    const lexer = new Lexer(new SourceText("  from 'x'"));
    expect(lexer.next()).toEqual({ kind: 'identifier', value: 'from', start: 2, end: 6 });
    expect(lexer.next()).toEqual({ kind: 'string', value: 'x', start: 7, end: 10 });
    expect(lexer.next()).toEqual({ kind: 'end', value: '', start: 10, end: 10 });
  });

  it('reports unterminated strings and comments, unknown escapes and huge numbers', () => {
    expect(lexError("a\n  'open").message).toBe(
      "line 2, column 3: expected a closing ' to end the string that starts here but found end of input",
    );
    expect(lexError("'ends with backslash\\").message).toMatch(/^line 1, column 1: expected a closing '/);
    expect(lexError('/* open').message).toBe(
      "line 1, column 1: expected '*/' to close the comment that starts here but found end of input",
    );
    expect(lexError("'\\u0041'").found).toBe("'\\u'");
    expect(lexError('9e999').message).toBe(
      "line 1, column 1: expected a number within the range of a double but found '9e999'",
    );
  });
});
