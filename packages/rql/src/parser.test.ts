import { describe, expect, it } from 'vitest';
import { parseRql } from './index.js';
import { call, eq, field, num, param, parse, str, where } from './test-fixtures/builders.js';

describe('from', () => {
  it('reads a collection, @all_docs and quoted names', () => {
    expect(parse('from Orders')).toEqual({ kind: 'query', from: { kind: 'collection', name: 'Orders' } });
    expect(parse('from @all_docs').from).toEqual({ kind: 'collection', name: '@all_docs' });
    expect(parse("from 'Order Lines'").from).toEqual({ kind: 'collection', name: 'Order Lines' });
    expect(parse('from "Order"').from).toEqual({ kind: 'collection', name: 'Order' });
    expect(parse('from Order-Lines').from).toEqual({ kind: 'collection', name: 'Order-Lines' });
    expect(parse('from Ünïcödé').from).toEqual({ kind: 'collection', name: 'Ünïcödé' });
  });

  it('reads an index by quoted or bare name', () => {
    expect(parse("from index 'Orders/Totals'").from).toEqual({ kind: 'index', name: 'Orders/Totals' });
    expect(parse('from index "Orders/Totals"').from).toEqual({ kind: 'index', name: 'Orders/Totals' });
    expect(parse('from INDEX Orders_ByName').from).toEqual({ kind: 'index', name: 'Orders_ByName' });
  });

  it('reads an alias with or without as', () => {
    expect(parse('from Orders as o').from).toEqual({ kind: 'collection', name: 'Orders', alias: 'o' });
    expect(parse('from Orders o').from).toEqual({ kind: 'collection', name: 'Orders', alias: 'o' });
    expect(parse("from index 'I' as 'my alias'").from).toEqual({
      kind: 'index',
      name: 'I',
      alias: 'my alias',
    });
    // A clause keyword right after the collection is the clause, not an alias.
    expect(parse('from Orders where x = 1').from).toEqual({ kind: 'collection', name: 'Orders' });
    expect(parse('from Orders o where o.x = 1').from).toEqual({
      kind: 'collection',
      name: 'Orders',
      alias: 'o',
    });
  });
});

describe('keywords', () => {
  it('are case-insensitive everywhere', () => {
    const lower = parse(
      "from index 'I' as i group by a where not a = 1 and b between 1 and 2 or c all in (true, null) " +
        'order by a as long desc load a as b select distinct a include a limit 1 offset 2',
    );
    const upper = parse(
      "FROM INDEX 'I' AS i GROUP BY a WHERE NOT a = 1 AND b BETWEEN 1 AND 2 OR c ALL IN (TRUE, NULL) " +
        'ORDER BY a AS LONG DESC LOAD a AS b SELECT DISTINCT a INCLUDE a LIMIT 1 OFFSET 2',
    );
    const mixed = parse(
      "From Index 'I' As i Group By a Where Not a = 1 And b Between 1 And 2 Or c All In (True, Null) " +
        'Order By a As Long Desc Load a As b Select Distinct a Include a Limit 1 Offset 2',
    );
    expect(upper).toEqual(lower);
    expect(mixed).toEqual(lower);
  });

  it('keep the spelling of names, which are case-sensitive', () => {
    expect(where('NAME = 1')).toEqual(eq('NAME', num('1')));
    expect(where('StartsWith(Name, $p)')).toEqual({
      kind: 'startsWith',
      field: field('Name'),
      value: param('p'),
    });
  });
});

describe('where: comparisons and values', () => {
  it('reads every comparison operator; == is = and <> is !=', () => {
    const operators = [
      ['=', '='],
      ['==', '='],
      ['!=', '!='],
      ['<>', '!='],
      ['<', '<'],
      ['<=', '<='],
      ['>', '>'],
      ['>=', '>='],
    ];
    for (const [written, read] of operators) {
      expect(where(`Total ${written} 10`)).toEqual({
        kind: 'comparison',
        operator: read,
        left: field('Total'),
        right: num('10'),
      });
    }
    expect(where('Total>=-1')).toEqual({
      kind: 'comparison',
      operator: '>=',
      left: field('Total'),
      right: num('-1'),
    });
  });

  it('reads strings, numbers, booleans, null and parameters', () => {
    const right = (text: string) => {
      const expression = where(`x = ${text}`);
      return expression?.kind === 'comparison' ? expression.right : undefined;
    };
    expect(right("'single'")).toEqual(str('single'));
    expect(right('"double"')).toEqual(str('double'));
    expect(right("'it''s'")).toEqual(str("it's"));
    expect(right("'it\\'s \\\"q\\\" back\\\\slash \\t\\n'")).toEqual(str('it\'s "q" back\\slash \t\n'));
    expect(right("'two\nlines'")).toEqual(str('two\nlines'));
    expect(right('42')).toEqual(num('42'));
    expect(right('-3.25')).toEqual(num('-3.25'));
    expect(right('6.02e23')).toEqual(num('6.02e23'));
    expect(right('1E-3')).toEqual(num('1E-3'));
    expect(right('10_000')).toEqual({ kind: 'number', raw: '10_000', value: 10000 });
    expect(right('true')).toEqual({ kind: 'boolean', value: true });
    expect(right('FALSE')).toEqual({ kind: 'boolean', value: false });
    expect(right('null')).toEqual({ kind: 'null' });
    expect(right('$name')).toEqual(param('name'));
    expect(right('$0')).toEqual(param('0'));
  });

  it('reads between, in, all in', () => {
    expect(where('Total between 10 and $max')).toEqual({
      kind: 'between',
      left: field('Total'),
      low: num('10'),
      high: param('max'),
    });
    expect(where("Tag in ('a', 'b', $c)")).toEqual({
      kind: 'in',
      left: field('Tag'),
      all: false,
      values: [str('a'), str('b'), param('c')],
    });
    expect(where('Tags all in (1, 2)')).toEqual({
      kind: 'in',
      left: field('Tags'),
      all: true,
      values: [num('1'), num('2')],
    });
    expect(where('Tag in ()')).toEqual({ kind: 'in', left: field('Tag'), all: false, values: [] });
  });

  it('reads id() on the left side', () => {
    expect(where("id() = 'users/1'")).toEqual({
      kind: 'comparison',
      operator: '=',
      left: call('id'),
      right: str('users/1'),
    });
    expect(where('id() in ($ids)')).toEqual({
      kind: 'in',
      left: call('id'),
      all: false,
      values: [param('ids')],
    });
  });
});

describe('where: field paths', () => {
  it('reads nested, array, quoted and @-prefixed segments', () => {
    const left = (text: string) => {
      const expression = where(`${text} = 1`);
      return expression?.kind === 'comparison' ? expression.left : undefined;
    };
    expect(left('Address.City')).toEqual(field('Address', 'City'));
    expect(left('Lines[].Product')).toEqual(field('Lines[]', 'Product'));
    expect(left('Lines [ ] . Product')).toEqual(field('Lines[]', 'Product'));
    expect(left("@metadata.'@collection'")).toEqual(field('@metadata', '@collection'));
    expect(left('@metadata.@collection')).toEqual(field('@metadata', '@collection'));
    expect(left("'First Name'")).toEqual(field('First Name'));
    expect(left('"Order".\'x y\'[]')).toEqual(field('Order', 'x y[]'));
    expect(left('o.Order.Lines')).toEqual(field('o', 'Order', 'Lines'));
    expect(left('Order-Lines')).toEqual(field('Order-Lines'));
    expect(left('_private')).toEqual(field('_private'));
  });
});

describe('where: precedence and grouping', () => {
  const a = eq('a', num('1'));
  const b = eq('b', num('2'));
  const c = eq('c', num('3'));

  it('binds not tighter than and, and and tighter than or', () => {
    expect(where('a = 1 or b = 2 and c = 3')).toEqual({
      kind: 'or',
      operands: [a, { kind: 'and', operands: [b, c] }],
    });
    expect(where('a = 1 and b = 2 or c = 3')).toEqual({
      kind: 'or',
      operands: [{ kind: 'and', operands: [a, b] }, c],
    });
    expect(where('not a = 1 and b = 2')).toEqual({ kind: 'and', operands: [{ kind: 'not', operand: a }, b] });
    expect(where('not a = 1 or b = 2')).toEqual({ kind: 'or', operands: [{ kind: 'not', operand: a }, b] });
  });

  it('flattens chains of the same operator but keeps parenthesised groups', () => {
    expect(where('a = 1 and b = 2 and c = 3')).toEqual({ kind: 'and', operands: [a, b, c] });
    expect(where('a = 1 or b = 2 or c = 3')).toEqual({ kind: 'or', operands: [a, b, c] });
    expect(where('a = 1 and (b = 2 and c = 3)')).toEqual({
      kind: 'and',
      operands: [a, { kind: 'and', operands: [b, c] }],
    });
    expect(where('(a = 1 or b = 2) and c = 3')).toEqual({
      kind: 'and',
      operands: [{ kind: 'or', operands: [a, b] }, c],
    });
    expect(where('not (a = 1 or b = 2)')).toEqual({ kind: 'not', operand: { kind: 'or', operands: [a, b] } });
    expect(where('((a = 1))')).toEqual(a);
  });

  it('reads not not, true, and the RavenDB idiom true and not', () => {
    expect(where('not not a = 1')).toEqual({ kind: 'not', operand: { kind: 'not', operand: a } });
    expect(where('true')).toEqual({ kind: 'true' });
    expect(where('true and not exists(Phone)')).toEqual({
      kind: 'and',
      operands: [{ kind: 'true' }, { kind: 'not', operand: { kind: 'exists', field: field('Phone') } }],
    });
  });

  it('does not confuse the and of between with a logical and', () => {
    expect(where('x between 1 and 2 and a = 1')).toEqual({
      kind: 'and',
      operands: [{ kind: 'between', left: field('x'), low: num('1'), high: num('2') }, a],
    });
  });
});

describe('where: methods', () => {
  it('reads startsWith, endsWith and regex, on fields or id()', () => {
    expect(where("startsWith(Name, 'Al')")).toEqual({
      kind: 'startsWith',
      field: field('Name'),
      value: str('Al'),
    });
    expect(where("endsWith(o.Name, 'son')")).toEqual({
      kind: 'endsWith',
      field: field('o', 'Name'),
      value: str('son'),
    });
    expect(where("startsWith(id(), 'users/')")).toEqual({
      kind: 'startsWith',
      field: call('id'),
      value: str('users/'),
    });
    expect(where("regex(Name, '^A.*e$')")).toEqual({
      kind: 'regex',
      field: field('Name'),
      pattern: str('^A.*e$'),
    });
  });

  it('reads exists and search with an optional operator', () => {
    expect(where('exists(Address.Phone)')).toEqual({ kind: 'exists', field: field('Address', 'Phone') });
    expect(where("search(Description, 'red shoes')")).toEqual({
      kind: 'search',
      field: field('Description'),
      terms: str('red shoes'),
    });
    expect(where('search(Description, $terms, AND)')).toEqual({
      kind: 'search',
      field: field('Description'),
      terms: param('terms'),
      operator: 'and',
    });
    expect(where("search(Description, 'x', or)")).toMatchObject({ operator: 'or' });
  });

  it('reads boost around any expression', () => {
    expect(where("boost(Name = 'x' or Name = 'y', 2.5) or boost(startsWith(Name, 'a'), $b)")).toEqual({
      kind: 'or',
      operands: [
        {
          kind: 'boost',
          expression: { kind: 'or', operands: [eq('Name', str('x')), eq('Name', str('y'))] },
          factor: num('2.5'),
        },
        {
          kind: 'boost',
          expression: { kind: 'startsWith', field: field('Name'), value: str('a') },
          factor: param('b'),
        },
      ],
    });
  });

  it('reads spatial relations with circles and WKT shapes', () => {
    expect(where("spatial.within(Location, spatial.circle(10, 32.1, -34.8, 'miles'))")).toEqual({
      kind: 'spatial',
      relation: 'within',
      target: field('Location'),
      shape: {
        kind: 'circle',
        radius: num('10'),
        latitude: num('32.1'),
        longitude: num('-34.8'),
        units: 'miles',
      },
    });
    expect(where("spatial.within(spatial.point(Lat, Lng), spatial.circle($r, $lat, $lng, 'KM'))")).toEqual({
      kind: 'spatial',
      relation: 'within',
      target: { kind: 'spatialFieldPoint', latitude: field('Lat'), longitude: field('Lng') },
      shape: {
        kind: 'circle',
        radius: param('r'),
        latitude: param('lat'),
        longitude: param('lng'),
        units: 'kilometers',
      },
    });
    expect(where('spatial.contains(Area, spatial.wkt($wkt))')).toEqual({
      kind: 'spatial',
      relation: 'contains',
      target: field('Area'),
      shape: { kind: 'wkt', wkt: param('wkt') },
    });
    expect(where("spatial.Intersects(Area, spatial.wkt('POINT(1 2)'))")).toMatchObject({
      relation: 'intersects',
    });
    expect(where("spatial.disjoint(Area, spatial.circle(1, 2, 3, 'kilometers'))")).toMatchObject({
      relation: 'disjoint',
      shape: { units: 'kilometers' },
    });
  });

  it('reads a field named like a method when no parenthesis follows', () => {
    expect(where('exists = true')).toEqual(eq('exists', { kind: 'boolean', value: true }));
    expect(where('spatial.within = 1')).toEqual({
      kind: 'comparison',
      operator: '=',
      left: field('spatial', 'within'),
      right: num('1'),
    });
  });
});

describe('group by', () => {
  it('reads fields, calls and aliases before where', () => {
    const query = parse(
      'from Orders group by Company, ShipTo.City, array(Lines[].Product) as Product where Company != null ' +
        'select count(), sum(Total) as Total, key() as Company',
    );
    expect(query.groupBy).toEqual([
      { kind: 'groupByItem', expression: field('Company') },
      { kind: 'groupByItem', expression: field('ShipTo', 'City') },
      { kind: 'groupByItem', expression: call('array', field('Lines[]', 'Product')), alias: 'Product' },
    ]);
    expect(query.where).toEqual({
      kind: 'comparison',
      operator: '!=',
      left: field('Company'),
      right: { kind: 'null' },
    });
    expect(query.select).toEqual({
      kind: 'selectFields',
      distinct: false,
      projections: [
        { kind: 'projection', expression: call('count') },
        { kind: 'projection', expression: call('sum', field('Total')), alias: 'Total' },
        { kind: 'projection', expression: call('key'), alias: 'Company' },
      ],
    });
  });
});

describe('order by', () => {
  const orderBy = (text: string) => parse(`from X order by ${text}`).orderBy;

  it('reads directions and ordering types', () => {
    expect(orderBy('Name')).toEqual([{ kind: 'orderItem', expression: field('Name'), direction: 'asc' }]);
    expect(orderBy('Name desc, Age ascending, Title DESCENDING, Id asc')).toEqual([
      { kind: 'orderItem', expression: field('Name'), direction: 'desc' },
      { kind: 'orderItem', expression: field('Age'), direction: 'asc' },
      { kind: 'orderItem', expression: field('Title'), direction: 'desc' },
      { kind: 'orderItem', expression: field('Id'), direction: 'asc' },
    ]);
    expect(orderBy('Freight as double desc, Code as alphaNumeric, N as long, S as string')).toEqual([
      { kind: 'orderItem', expression: field('Freight'), direction: 'desc', ordering: 'double' },
      { kind: 'orderItem', expression: field('Code'), direction: 'asc', ordering: 'alphanumeric' },
      { kind: 'orderItem', expression: field('N'), direction: 'asc', ordering: 'long' },
      { kind: 'orderItem', expression: field('S'), direction: 'asc', ordering: 'string' },
    ]);
    // RavenDB writes the type first; the other order is accepted as well.
    expect(orderBy('Freight desc as long')).toEqual(orderBy('Freight as long desc'));
  });

  it('reads score(), random() and other calls', () => {
    expect(orderBy("score() desc, random('seed'), id()")).toEqual([
      { kind: 'orderItem', expression: call('score'), direction: 'desc' },
      { kind: 'orderItem', expression: call('random', str('seed')), direction: 'asc' },
      { kind: 'orderItem', expression: call('id'), direction: 'asc' },
    ]);
  });

  it('reads spatial.distance', () => {
    expect(orderBy('spatial.distance(Location, spatial.point(47.6, -122.3)) desc')).toEqual([
      {
        kind: 'orderItem',
        expression: {
          kind: 'spatialDistance',
          target: field('Location'),
          point: { kind: 'point', latitude: num('47.6'), longitude: num('-122.3') },
        },
        direction: 'desc',
      },
    ]);
    expect(orderBy('spatial.distance(spatial.point(Lat, Lng), spatial.point($lat, $lng), 0.1)')).toEqual([
      {
        kind: 'orderItem',
        expression: {
          kind: 'spatialDistance',
          target: { kind: 'spatialFieldPoint', latitude: field('Lat'), longitude: field('Lng') },
          point: { kind: 'point', latitude: param('lat'), longitude: param('lng') },
          roundFactor: num('0.1'),
        },
        direction: 'asc',
      },
    ]);
  });
});

describe('load', () => {
  it('reads paths with aliases, with or without as', () => {
    expect(parse('from Orders as o load o.Company as c, o.Employee e select c.Name').load).toEqual([
      { kind: 'loadItem', path: field('o', 'Company'), alias: 'c' },
      { kind: 'loadItem', path: field('o', 'Employee'), alias: 'e' },
    ]);
  });
});

describe('select', () => {
  const select = (text: string) => parse(`from X select ${text}`).select;

  it('reads fields, nested paths, aliases, distinct and calls', () => {
    expect(
      select("Name, Address.City as City, Lines[].Product, 'First Name' as 'Given name', id() as Id"),
    ).toEqual({
      kind: 'selectFields',
      distinct: false,
      projections: [
        { kind: 'projection', expression: field('Name') },
        { kind: 'projection', expression: field('Address', 'City'), alias: 'City' },
        { kind: 'projection', expression: field('Lines[]', 'Product') },
        { kind: 'projection', expression: field('First Name'), alias: 'Given name' },
        { kind: 'projection', expression: call('id'), alias: 'Id' },
      ],
    });
    expect(select('distinct Country')).toEqual({
      kind: 'selectFields',
      distinct: true,
      projections: [{ kind: 'projection', expression: field('Country') }],
    });
    expect(select("counter('Likes') as Likes, sum(Lines[].Quantity)")).toMatchObject({
      projections: [
        { expression: call('counter', str('Likes')), alias: 'Likes' },
        { expression: call('sum', field('Lines[]', 'Quantity')) },
      ],
    });
  });

  it('reads field facets with aggregations, options and aliases', () => {
    expect(select('facet(Tags), facet(Brand, sum(Price), AVG(Price), $options) as Brands')).toEqual({
      kind: 'selectFacets',
      facets: [
        { kind: 'fieldFacet', field: field('Tags'), aggregations: [] },
        {
          kind: 'fieldFacet',
          field: field('Brand'),
          aggregations: [
            { kind: 'facetAggregation', function: 'sum', field: field('Price') },
            { kind: 'facetAggregation', function: 'avg', field: field('Price') },
          ],
          options: param('options'),
          alias: 'Brands',
        },
      ],
    });
  });

  it('reads range facets', () => {
    const lt = { kind: 'comparison', operator: '<', left: field('Price'), right: num('10') };
    const ge = { kind: 'comparison', operator: '>=', left: field('Price'), right: num('20') };
    const between = { kind: 'between', left: field('Price'), low: num('10'), high: num('20') };
    expect(select('facet(Price < 10, Price between 10 and 20, Price >= 20), facet(Tags)')).toEqual({
      kind: 'selectFacets',
      facets: [
        { kind: 'rangeFacet', ranges: [lt, between, ge], aggregations: [] },
        { kind: 'fieldFacet', field: field('Tags'), aggregations: [] },
      ],
    });
    expect(select('facet(Price >= 20 and Price < 10, max(Price), $o)')).toEqual({
      kind: 'selectFacets',
      facets: [
        {
          kind: 'rangeFacet',
          ranges: [{ kind: 'and', operands: [ge, lt] }],
          aggregations: [{ kind: 'facetAggregation', function: 'max', field: field('Price') }],
          options: param('o'),
        },
      ],
    });
  });

  it('reads suggestions', () => {
    expect(select("suggest(Name, 'jhon'), suggest(Company, $term, $options) as S")).toEqual({
      kind: 'selectSuggest',
      suggestions: [
        { kind: 'suggestion', field: field('Name'), term: str('jhon') },
        {
          kind: 'suggestion',
          field: field('Company'),
          term: param('term'),
          options: param('options'),
          alias: 'S',
        },
      ],
    });
  });

  it('reads facet and suggest as plain fields when no parenthesis follows', () => {
    expect(select('facet, suggest as s')).toEqual({
      kind: 'selectFields',
      distinct: false,
      projections: [
        { kind: 'projection', expression: field('facet') },
        { kind: 'projection', expression: field('suggest'), alias: 's' },
      ],
    });
  });
});

describe('include', () => {
  it('reads paths and calls', () => {
    expect(
      parse('from Orders include Company, Lines[].Product, timings(), explanations($o)').include,
    ).toEqual([
      field('Company'),
      field('Lines[]', 'Product'),
      call('timings'),
      call('explanations', param('o')),
    ]);
  });
});

describe('limit and offset', () => {
  it('reads limit, offset, RavenDB skip-take and parameters', () => {
    expect(parse('from X limit 10')).toMatchObject({ limit: num('10') });
    expect(parse('from X limit 10').offset).toBeUndefined();
    expect(parse('from X limit 10 offset 5')).toMatchObject({ limit: num('10'), offset: num('5') });
    expect(parse('from X limit 5, 10')).toMatchObject({ limit: num('10'), offset: num('5') });
    expect(parse('from X offset 5')).toMatchObject({ offset: num('5') });
    expect(parse('from X limit $take offset $skip')).toMatchObject({
      limit: param('take'),
      offset: param('skip'),
    });
    expect(parse('from X limit 1_000')).toMatchObject({ limit: { value: 1000 } });
  });
});

describe('whole queries', () => {
  it('reads every clause in RavenDB order, with comments anywhere', () => {
    const query = parse(`
      // all the clauses
      from Orders as o /* alias */
      where o.Total > $min and (search(o.Notes, 'urgent') or o.Priority in (1, 2))
      order by o.Total as double desc, score()
      load o.Company as c
      select o.Total as Total, c.Name as Company
      include o.Employee, timings()
      limit 20 offset 40 // paging
    `);
    expect(query).toEqual({
      kind: 'query',
      from: { kind: 'collection', name: 'Orders', alias: 'o' },
      where: {
        kind: 'and',
        operands: [
          { kind: 'comparison', operator: '>', left: field('o', 'Total'), right: param('min') },
          {
            kind: 'or',
            operands: [
              { kind: 'search', field: field('o', 'Notes'), terms: str('urgent') },
              { kind: 'in', left: field('o', 'Priority'), all: false, values: [num('1'), num('2')] },
            ],
          },
        ],
      },
      orderBy: [
        { kind: 'orderItem', expression: field('o', 'Total'), direction: 'desc', ordering: 'double' },
        { kind: 'orderItem', expression: call('score'), direction: 'asc' },
      ],
      load: [{ kind: 'loadItem', path: field('o', 'Company'), alias: 'c' }],
      select: {
        kind: 'selectFields',
        distinct: false,
        projections: [
          { kind: 'projection', expression: field('o', 'Total'), alias: 'Total' },
          { kind: 'projection', expression: field('c', 'Name'), alias: 'Company' },
        ],
      },
      include: [field('o', 'Employee'), call('timings')],
      limit: num('20'),
      offset: num('40'),
    });
  });
});

describe('positions', () => {
  const text = ['from Orders as o', "where o.Name = 'x'", '  and Total > 10', 'select o.Name as N'].join(
    '\n',
  );
  const query = parseRql(text);

  it('spans the whole query and each clause node', () => {
    expect(query.position).toEqual({
      start: { offset: 0, line: 1, column: 1 },
      end: { offset: text.length, line: 4, column: 19 },
    });
    expect(query.from.position).toEqual({
      start: { offset: 0, line: 1, column: 1 },
      end: { offset: 16, line: 1, column: 17 },
    });
  });

  it('gives line and column of nodes on later lines', () => {
    const where = query.where;
    if (where?.kind !== 'and') throw new Error('expected an and');
    expect(where.position.start).toMatchObject({ line: 2, column: 7 });
    expect(where.position.end).toMatchObject({ line: 3, column: 17 });
    const second = where.operands[1];
    if (second?.kind !== 'comparison') throw new Error('expected a comparison');
    expect(second.position.start).toMatchObject({ line: 3, column: 7 });
    expect(second.left.position.start).toMatchObject({ line: 3, column: 7 });
    expect(second.right.position).toMatchObject({
      start: { line: 3, column: 15 },
      end: { line: 3, column: 17 },
    });
    const first = where.operands[0];
    if (first?.kind !== 'comparison' || first.left.kind !== 'field')
      throw new Error('expected a field comparison');
    expect(first.left.segments[1]?.position.start).toMatchObject({ line: 2, column: 9 });
  });

  it('positions projections and text slices match the source', () => {
    const select = query.select;
    if (select?.kind !== 'selectFields') throw new Error('expected fields');
    const projection = select.projections[0]!;
    expect(text.slice(projection.position.start.offset, projection.position.end.offset)).toBe('o.Name as N');
    expect(projection.position.start).toMatchObject({ line: 4, column: 8 });
    expect(text.slice(select.position.start.offset, select.position.end.offset)).toBe('select o.Name as N');
  });

  it('counts \\r\\n and lone \\r as one line break', () => {
    const crlf = parseRql('from A\r\nwhere\rx = 1');
    expect(crlf.where?.position.start).toMatchObject({ line: 3, column: 1, offset: 14 });
  });
});
