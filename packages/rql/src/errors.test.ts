import { describe, expect, it } from 'vitest';
import { MAX_NESTING_DEPTH, MAX_QUERY_LENGTH, parseRql, RqlSyntaxError } from './index.js';

/** The RqlSyntaxError `parseRql(text)` throws. */
function syntaxError(text: string): RqlSyntaxError {
  try {
    parseRql(text);
  } catch (error) {
    if (error instanceof RqlSyntaxError) return error;
    throw error;
  }
  throw new Error(`parsed without error: ${text}`);
}

function message(text: string): string {
  return syntaxError(text).message;
}

describe('RqlSyntaxError', () => {
  it('carries code, position, expected and found', () => {
    const error = syntaxError('from Orders\norder Name');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('RqlSyntaxError');
    expect(error.code).toBe('InvalidQuery');
    expect(error.line).toBe(2);
    expect(error.column).toBe(7);
    expect(error.offset).toBe(18);
    expect(error.expected).toEqual(["'by'"]);
    expect(error.found).toBe("'Name'");
    expect(error.message).toBe("line 2, column 7: expected 'by' after 'order' but found 'Name'");
  });
});

describe('messages for typical mistakes say what was expected', () => {
  it('an empty query or a missing from', () => {
    expect(message('')).toBe("line 1, column 1: expected 'from' but found end of input");
    expect(message('select Name from Orders')).toBe("line 1, column 1: expected 'from' but found 'select'");
  });

  it('a missing collection', () => {
    expect(message('from')).toBe(
      "line 1, column 5: expected 'index' or a collection name after 'from' but found end of input",
    );
    expect(message("from where Name = 'x'")).toBe(
      "line 1, column 6: expected 'index' or a collection name after 'from' but found 'where'",
    );
    expect(message('from index')).toBe(
      "line 1, column 11: expected an index name after 'index' but found end of input",
    );
  });

  it('order without by', () => {
    expect(message("from Orders\nwhere Name = 'x'\norder name")).toBe(
      "line 3, column 7: expected 'by' after 'order' but found 'name'",
    );
  });

  it('an unterminated string, pointing at its opening quote', () => {
    const error = syntaxError("from Orders\nwhere Name = 'abc");
    expect(error.message).toBe(
      "line 2, column 14: expected a closing ' to end the string that starts here but found end of input",
    );
    expect(error.offset).toBe(25);
  });

  it('a limit that is not a number', () => {
    expect(message("from Orders limit 'x'")).toBe(
      "line 1, column 19: expected a number or a $parameter after 'limit' but found string 'x'",
    );
    expect(message('from Orders limit -1')).toBe(
      "line 1, column 19: expected a whole number from 0 to 2^53 - 1 or a $parameter after 'limit' but found '-1'",
    );
    expect(message('from Orders limit 2.5')).toMatch(/expected a whole number .* but found '2.5'$/);
    expect(message('from Orders limit 5, 1e3')).toMatch(
      /expected a whole number .* after ',' but found '1e3'$/,
    );
  });

  it('trailing garbage, listing every clause that could follow', () => {
    expect(message('from Orders where a = 1 foo')).toBe(
      "line 1, column 25: expected 'and', 'or', 'order', 'load', 'select', 'include', 'limit', 'offset' or end of input after '1' but found 'foo'",
    );
    expect(message('from Orders 5')).toBe(
      "line 1, column 13: expected 'as', an alias, 'group', 'where', 'order', 'load', 'select', 'include', 'limit', 'offset' or end of input after 'Orders' but found '5'",
    );
  });

  it('unbalanced parentheses', () => {
    expect(message('from Orders where (a = 1 or b = 2')).toBe(
      "line 1, column 34: expected 'and', 'or' or ')' after '2' but found end of input",
    );
    expect(message('from Orders where (a = 1')).toBe(
      "line 1, column 25: expected 'and', 'or' or ')' after '1' but found end of input",
    );
    expect(message('from Orders where a = 1)')).toMatch(
      /column 24: expected 'and', 'or', .* but found '\)'$/,
    );
    expect(message("from Orders where startsWith(Name, 'x'")).toBe(
      "line 1, column 39: expected ')' after string 'x' but found end of input",
    );
  });

  it('an unknown operator', () => {
    const operators = "'=', '!=', '<', '<=', '>', '>=', 'between', 'in' or 'all in'";
    expect(message('from Orders where a ~ 1')).toBe(
      `line 1, column 21: expected ${operators} after 'a' but found '~'`,
    );
    expect(message("from Orders where Name like 'x'")).toBe(
      `line 1, column 24: expected ${operators} after 'Name' but found 'like'`,
    );
    expect(message('from Orders where a === 1')).toMatch(/expected a string, .* after '==' but found '='$/);
  });

  it('a missing value or operand', () => {
    expect(message('from Orders where Name =')).toBe(
      "line 1, column 25: expected a string, a number, 'true', 'false', 'null' or a $parameter after '=' but found end of input",
    );
    expect(message('from Orders where Name = Other')).toMatch(/after '=' but found 'Other'$/);
    expect(message('from Orders where a = 1 and')).toBe(
      "line 1, column 28: expected 'not', '(', 'true', a field name or a method call after 'and' but found end of input",
    );
    expect(message('from Orders where Age between 1 20')).toBe(
      "line 1, column 33: expected 'and' after '1' but found '20'",
    );
    expect(message("from Orders where Tag in 'a'")).toBe(
      "line 1, column 26: expected '(' after 'in' but found string 'a'",
    );
    expect(message('from Orders where Tag all (1)')).toBe(
      "line 1, column 27: expected 'in' after 'all' but found '('",
    );
  });

  it('an unknown method, listing the known ones', () => {
    expect(message("from Orders where startWith(Name, 'x')")).toBe(
      'line 1, column 19: expected startsWith(...), endsWith(...), regex(...), exists(...), search(...), boost(...), ' +
        "spatial.within(...), spatial.contains(...), spatial.intersects(...), spatial.disjoint(...) or id() but found 'startWith('",
    );
  });

  it('wrong method arguments', () => {
    expect(message('from Orders where startsWith(Name, 5)')).toBe(
      "line 1, column 36: expected a string or a $parameter after ',' but found '5'",
    );
    expect(message("from Orders where search(Name, 'x', maybe)")).toBe(
      "line 1, column 37: expected 'and' or 'or' after ',' but found 'maybe'",
    );
    expect(message('from Orders where spatial.within(Loc, spatial.square(1))')).toBe(
      "line 1, column 39: expected spatial.circle(...) or spatial.wkt(...) but found 'spatial.square('",
    );
    expect(message("from Orders where spatial.within(Loc, spatial.circle(1, 2, 3, 'parsecs'))")).toBe(
      "line 1, column 63: expected 'miles' or 'kilometers' after ',' but found string 'parsecs'",
    );
    expect(message('from Orders where id(1) = 2')).toBe(
      "line 1, column 22: expected ')' after '(' but found '1'",
    );
  });

  it('mistakes in order by, load, select and include', () => {
    expect(message('from Orders order by Name as int')).toBe(
      "line 1, column 30: expected 'string', 'long', 'double' or 'alphanumeric' after 'as' but found 'int'",
    );
    expect(message('from Orders load o.Company')).toBe(
      "line 1, column 27: expected 'as' or an alias after 'Company' but found end of input",
    );
    expect(message('from Orders select *')).toBe(
      "line 1, column 20: expected 'distinct' or a field name after 'select' but found '*'",
    );
    expect(message('from Orders select Name where x = 1')).toBe(
      "line 1, column 25: expected 'as', ',', 'include', 'limit', 'offset' or end of input after 'Name' but found 'where'",
    );
    expect(message('from Orders select Name, facet(Tags)')).toBe(
      "line 1, column 26: expected a field name or a function call but found 'facet(' among other projections",
    );
    expect(message('from Orders select facet(Tags, Price)')).toBe(
      "line 1, column 32: expected sum(...), avg(...), min(...), max(...) or a $parameter after ',' but found 'Price'",
    );
    expect(message('from Orders select suggest(Name)')).toBe(
      "line 1, column 32: expected ',' after 'Name' but found ')'",
    );
    expect(message('from Orders include')).toBe(
      "line 1, column 20: expected a field name after 'include' but found end of input",
    );
    expect(message('from Orders where Lines[0].Name = 1')).toBe(
      "line 1, column 25: expected ']' after '[' but found '0'",
    );
  });

  it('lexical mistakes', () => {
    expect(message("from Orders where Name = 'a\\q'")).toBe(
      "line 1, column 28: expected an escape sequence (\\' \\\" \\\\ \\t \\n \\r \\f \\b) but found '\\q'",
    );
    expect(message('from Orders /* open')).toBe(
      "line 1, column 13: expected '*/' to close the comment that starts here but found end of input",
    );
    expect(message('from Orders where x = 1e999')).toBe(
      "line 1, column 23: expected a number within the range of a double but found '1e999'",
    );
    expect(message('from Orders where $ = 1')).toMatch(/after 'where' but found '\$'$/);
    expect(message('from Orders where x = 1 ;')).toMatch(/but found ';'$/);
  });

  it('shortens long and multi-line tokens in messages', () => {
    expect(message(`from Orders limit '${'x'.repeat(100)}'`)).toMatch(/but found string 'x{32}…'$/);
    expect(message("from Orders limit 'a\nb'")).toMatch(/but found string 'a\\nb'$/);
  });
});

describe('limits against hostile input', () => {
  it('refuses queries longer than MAX_QUERY_LENGTH', () => {
    const padded = `from Orders${' '.repeat(MAX_QUERY_LENGTH - 'from Orders'.length)}`;
    expect(parseRql(padded).from).toMatchObject({ name: 'Orders' });
    const error = syntaxError(`${padded} `);
    expect(error.code).toBe('InvalidQuery');
    expect(error.offset).toBe(MAX_QUERY_LENGTH);
    expect(error.message).toBe(
      `line 1, column ${MAX_QUERY_LENGTH + 1}: expected a query of at most ${MAX_QUERY_LENGTH} characters but found ${MAX_QUERY_LENGTH + 1} characters`,
    );
    expect(syntaxError('x'.repeat(10_000_000)).offset).toBe(MAX_QUERY_LENGTH);
  });

  it('accepts nesting up to MAX_NESTING_DEPTH and refuses deeper nesting', () => {
    const nested = (depth: number) => `from X where ${'('.repeat(depth)}a = 1${')'.repeat(depth)}`;
    // The where expression itself is one level.
    expect(() => parseRql(nested(MAX_NESTING_DEPTH - 1))).not.toThrow();
    const error = syntaxError(nested(MAX_NESTING_DEPTH));
    expect(error.message).toBe(
      `line 1, column ${14 + MAX_NESTING_DEPTH}: expected at most ${MAX_NESTING_DEPTH} levels of nesting but found 'a' nested ${MAX_NESTING_DEPTH + 1} levels deep`,
    );
  });

  it('refuses deep nesting of every recursive construct without overflowing the stack', () => {
    const deep = 5_000; // deep enough to overflow an unguarded recursive parser, short enough to be read
    const texts = [
      `from X where ${'('.repeat(deep)}a = 1${')'.repeat(deep)}`,
      `from X where ${'not '.repeat(deep)}a = 1`,
      `from X where ${'boost('.repeat(deep)}a = 1${', 2)'.repeat(deep)}`,
      `from X select ${'count('.repeat(deep)}${')'.repeat(deep)}`,
      `from X order by ${'f('.repeat(deep)}${')'.repeat(deep)}`,
      `from X include ${'f('.repeat(deep)}`,
    ];
    for (const text of texts) {
      expect(syntaxError(text).expected).toEqual([`at most ${MAX_NESTING_DEPTH} levels of nesting`]);
    }
  });

  it('handles long flat queries without recursion', () => {
    const terms = Array.from({ length: 3000 }, (_, i) => `a${i} = ${i}`).join(' or ');
    const query = parseRql(`from X where ${terms}`);
    expect(query.where?.kind === 'or' && query.where.operands.length).toBe(3000);
  });

  it('rejects non-string input with a TypeError', () => {
    expect(() => parseRql(42 as unknown as string)).toThrow(TypeError);
  });
});
