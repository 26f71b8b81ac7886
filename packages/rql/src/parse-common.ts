// Grammar pieces every clause uses: values, names, field paths and function calls.

import type {
  CallArgument,
  FieldPath,
  FunctionCall,
  NumericValue,
  Parameter,
  PathSegment,
  TextValue,
  Value,
} from './ast.js';
import { isClauseKeyword, isKeyword } from './identifiers.js';
import type { TokenStream } from './token-stream.js';

const VALUE_DESCRIPTIONS = ['a string', 'a number', "'true'", "'false'", "'null'", 'a $parameter'];

/** `'text'`, `42`, `true`, `false`, `null` or `$name`. */
export function parseValue(ts: TokenStream): Value {
  const token = ts.peek();
  const start = token.start;
  switch (token.kind) {
    case 'string':
      ts.advance();
      return { kind: 'string', value: token.value, position: ts.rangeFrom(start) };
    case 'number':
      ts.advance();
      return {
        kind: 'number',
        value: numberValue(token.value),
        raw: token.value,
        position: ts.rangeFrom(start),
      };
    case 'parameter':
      ts.advance();
      return { kind: 'parameter', name: token.value, position: ts.rangeFrom(start) };
    case 'identifier': {
      const word = token.value.toLowerCase();
      if (word === 'true' || word === 'false') {
        ts.advance();
        return { kind: 'boolean', value: word === 'true', position: ts.rangeFrom(start) };
      }
      if (word === 'null') {
        ts.advance();
        return { kind: 'null', position: ts.rangeFrom(start) };
      }
      break;
    }
  }
  return ts.fail(...VALUE_DESCRIPTIONS);
}

function numberValue(raw: string): number {
  return Number(raw.replaceAll('_', ''));
}

/** A number or `$name`. */
export function parseNumericValue(ts: TokenStream): NumericValue {
  const token = ts.peek();
  if (token.kind === 'number' || token.kind === 'parameter') return parseValue(ts) as NumericValue;
  return ts.fail('a number', 'a $parameter');
}

/** A string or `$name`. */
export function parseTextValue(ts: TokenStream): TextValue {
  const token = ts.peek();
  if (token.kind === 'string' || token.kind === 'parameter') return parseValue(ts) as TextValue;
  return ts.fail('a string', 'a $parameter');
}

/** `$name`. */
export function parseParameter(ts: TokenStream): Parameter {
  if (ts.peek().kind === 'parameter') return parseValue(ts) as Parameter;
  return ts.fail('a $parameter');
}

/**
 * A name that is not a field path: collection, index or alias. A bare identifier
 * (not a clause keyword) or a quoted string.
 */
export function parseName(ts: TokenStream, description: string): string {
  const token = ts.peek();
  if (token.kind === 'string' || (token.kind === 'identifier' && !isClauseKeyword(token.value))) {
    ts.advance();
    return token.value;
  }
  return ts.fail(description);
}

/** True when the current token can be an alias written without `as` (`from Orders o`). */
export function atBareAlias(ts: TokenStream): boolean {
  const token = ts.peek();
  if (token.kind === 'identifier' && !isKeyword(token.value)) return true;
  ts.note('an alias');
  return false;
}

/** `as alias`, if present. */
export function parseOptionalAlias(ts: TokenStream): string | undefined {
  if (!ts.acceptKeyword('as')) return undefined;
  return parseName(ts, 'an alias');
}

/** A field path, plus the dotted name it spells when a `(` follows and it can name a function. */
export interface PathHead {
  path: FieldPath;
  /** `spatial.within` for `spatial.within(`; undefined when no `(` follows or segments were quoted. */
  callName: string | undefined;
}

/**
 * `Name`, `Address.City`, `Lines[].Product`, `@metadata.'@collection'`, `'First Name'`.
 * A bare first segment may not be a clause keyword (`where`, `order`, ...), as in RavenDB.
 * Stops before a `(`; the caller decides whether the path names a function.
 */
export function parsePathHead(ts: TokenStream): PathHead {
  const start = ts.peek().start;
  const segments: PathSegment[] = [];
  let canNameFunction = true;
  for (;;) {
    const token = ts.peek();
    const first = segments.length === 0;
    if (token.kind === 'string') {
      canNameFunction = false;
    } else if (token.kind !== 'identifier' || (first && isClauseKeyword(token.value))) {
      return ts.fail('a field name');
    }
    ts.advance();
    let array = false;
    if (ts.isPunctuation('[')) {
      ts.advance();
      ts.expectPunctuation(']');
      array = true;
      canNameFunction = false;
    }
    segments.push({ name: token.value, array, position: ts.rangeFrom(token.start) });
    if (!ts.isPunctuation('.')) break;
    ts.advance();
  }
  const path: FieldPath = { kind: 'field', segments, position: ts.rangeFrom(start) };
  const callName =
    canNameFunction && ts.isPunctuation('(') ? segments.map((segment) => segment.name).join('.') : undefined;
  return { path, callName };
}

/** A field path that must not be followed by `(`. */
export function parseFieldPath(ts: TokenStream): FieldPath {
  return parsePathHead(ts).path;
}

/** A field path or, when a `(` follows its name, a function call. */
export function parsePathOrCall(ts: TokenStream): FieldPath | FunctionCall {
  const head = parsePathHead(ts);
  return head.callName === undefined ? head.path : parseCallArguments(ts, head.path, head.callName);
}

/** `(arg, ...)` after a function name; arguments are values, field paths or nested calls. */
export function parseCallArguments(ts: TokenStream, name: FieldPath, callName: string): FunctionCall {
  ts.expectPunctuation('(');
  ts.enter();
  const args: CallArgument[] = [];
  if (!ts.acceptPunctuation(')')) {
    do {
      args.push(parseCallArgument(ts));
    } while (ts.acceptPunctuation(','));
    ts.expectPunctuation(')');
  }
  ts.leave();
  return { kind: 'call', name: callName, args, position: ts.rangeFrom(name.position.start.offset) };
}

function parseCallArgument(ts: TokenStream): CallArgument {
  const token = ts.peek();
  if (token.kind === 'string' || token.kind === 'number' || token.kind === 'parameter') return parseValue(ts);
  if (token.kind === 'identifier') {
    const word = token.value.toLowerCase();
    if (word === 'true' || word === 'false' || word === 'null') return parseValue(ts);
    return parsePathOrCall(ts);
  }
  return ts.fail('a field name', ...VALUE_DESCRIPTIONS);
}
