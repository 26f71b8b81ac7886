// RQL's tokens, enough to colour the editor's text (the tenant's parser is what checks the query).
export type TokenKind = 'keyword' | 'string' | 'number' | 'parameter' | 'comment' | 'text';
export interface Token {
  kind: TokenKind;
  text: string;
}

const KEYWORDS = new Set(
  (
    'from index where and or not order by asc desc select load include as limit offset group update ' +
    'declare function between in all distinct filter true false null'
  ).split(' '),
);

// One alternative per kind, tried at each position in this order; anything else is plain text.
const TOKEN =
  /(\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$))|('(?:[^'\\]|\\[\s\S])*'?|"(?:[^"\\]|\\[\s\S])*"?)|(\$[A-Za-z_]\w*)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_@][\w@]*)/g;

/** The text cut into tokens; their texts joined give the text back exactly. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  const plain = (end: number) => {
    if (end > at) tokens.push({ kind: 'text', text: text.slice(at, end) });
  };
  for (const match of text.matchAll(TOKEN)) {
    const [whole, comment, string, parameter, number, word] = match;
    plain(match.index);
    const kind: TokenKind =
      comment !== undefined
        ? 'comment'
        : string !== undefined
          ? 'string'
          : parameter !== undefined
            ? 'parameter'
            : number !== undefined
              ? 'number'
              : word !== undefined && KEYWORDS.has(word.toLowerCase())
                ? 'keyword'
                : 'text';
    tokens.push({ kind, text: whole });
    at = match.index + whole.length;
  }
  plain(text.length);
  return tokens;
}
