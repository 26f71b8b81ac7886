// Terse builders for expected trees (without positions) in tests.

import type {
  Expression,
  FieldPath,
  FunctionCall,
  NumberLiteral,
  Parameter,
  RqlQuery,
  StringLiteral,
  Unpositioned,
} from '../ast.js';
import { parseRql } from '../parser.js';
import { stripPositions } from './strip-positions.js';

type U<T> = Unpositioned<T>;

/** `field('Lines[]', 'Product')` is `Lines[].Product`. */
export function field(...names: string[]): U<FieldPath> {
  return {
    kind: 'field',
    segments: names.map((name) =>
      name.endsWith('[]') ? { name: name.slice(0, -2), array: true } : { name, array: false },
    ),
  };
}

export function str(value: string): U<StringLiteral> {
  return { kind: 'string', value };
}

export function num(raw: string): U<NumberLiteral> {
  return { kind: 'number', raw, value: Number(raw.replaceAll('_', '')) };
}

export function param(name: string): U<Parameter> {
  return { kind: 'parameter', name };
}

export function call(name: string, ...args: U<FunctionCall>['args']): U<FunctionCall> {
  return { kind: 'call', name, args };
}

/** `Name = 'x'` style comparison with a field on the left. */
export function eq(name: string, right: U<Expression & { kind: 'comparison' }>['right']): U<Expression> {
  return { kind: 'comparison', operator: '=', left: field(name), right };
}

/** The parsed tree without positions. */
export function parse(text: string): U<RqlQuery> {
  return stripPositions(parseRql(text));
}

/** The where expression of `from X where <text>`, without positions. */
export function where(text: string): U<Expression> | undefined {
  return parse(`from X where ${text}`).where;
}
