import { afterEach, describe, expect, it } from 'vitest';
import { compileJsIndex, type JsIndexProgram, type MapOutcome, SandboxError } from './index.js';

const programs: JsIndexProgram[] = [];

function compile(...args: Parameters<typeof compileJsIndex>): JsIndexProgram {
  const program = compileJsIndex(...args);
  programs.push(program);
  return program;
}

afterEach(() => {
  for (const program of programs.splice(0)) program.dispose();
});

function doc(id: string, collection: string, fields: Record<string, unknown>): Record<string, unknown> {
  return { ...fields, '@metadata': { '@id': id, '@collection': collection } };
}

function entriesOf(outcome: MapOutcome | undefined): Record<string, unknown>[] {
  if (outcome === undefined || !outcome.ok)
    throw new Error(`expected a successful outcome, got ${JSON.stringify(outcome)}`);
  return outcome.entries;
}

function errorOf(outcome: MapOutcome | undefined): string {
  if (outcome === undefined || outcome.ok)
    throw new Error(`expected a failed outcome, got ${JSON.stringify(outcome)}`);
  return outcome.error;
}

function catchSandboxError(fn: () => unknown): SandboxError {
  try {
    fn();
  } catch (err) {
    if (err instanceof SandboxError) return err;
    throw err;
  }
  throw new Error('expected a SandboxError');
}

const ordersReduce =
  'groupBy(x => x.Company).aggregate(g => ({ Company: g.key, Total: g.values.reduce((s, v) => s + v.Total, 0), Count: g.values.length }))';

describe('compileJsIndex: maps', () => {
  it('registers several maps and collections in order, deduplicated', () => {
    const program = compile({
      maps: [
        "map('Users', u => ({ Name: u.Name, Age: u.Age, Tags: u.Tags }))",
        "map('Orders', o => ({ Company: o.Company })); map('Users', u => ({ Kind: 'second' }))",
        "map('Companies', c => ({ Name: c.Name }))",
      ],
    });
    expect(program.collections).toEqual(['Users', 'Orders', 'Companies']);
    expect(program.hasReduce).toBe(false);

    const out = program.map('Users', [doc('users/1', 'Users', { Name: 'Ann', Age: 31, Tags: ['a', 'b'] })]);
    expect(out).toHaveLength(1);
    // Every map of the collection runs, in registration order.
    expect(entriesOf(out[0])).toEqual([{ Name: 'Ann', Age: 31, Tags: ['a', 'b'] }, { Kind: 'second' }]);
    expect(entriesOf(program.map('Orders', [doc('orders/1', 'Orders', { Company: 'c/1' })])[0])).toEqual([
      { Company: 'c/1' },
    ]);
    // A collection no map names yields no entries (without entering the isolate).
    expect(program.map('Employees', [doc('employees/1', 'Employees', {})])).toEqual([
      { ok: true, entries: [] },
    ]);
    expect(program.map('Users', [])).toEqual([]);
  });

  it('lets maps of the same collection declare the same top-level names and not see each other’s mutations', () => {
    const program = compile({
      maps: [
        "const label = 'first'; map('Users', u => { u.Name = 'changed'; return { label, Name: u.Name }; })",
        "const label = 'second'; function pick(u) { return u.Name; } map('Users', u => ({ label, Name: pick(u) }))",
      ],
    });
    expect(entriesOf(program.map('Users', [doc('users/1', 'Users', { Name: 'Ann' })])[0])).toEqual([
      { label: 'first', Name: 'changed' },
      { label: 'second', Name: 'Ann' },
    ]);
  });

  it('produces several entries for a map returning an array, and none for null/undefined', () => {
    const program = compile({
      maps: [
        "map('Orders', function (o) { return o.Lines.map(l => ({ Product: l.Product, Qty: l.Quantity })); })",
        "map('Users', u => u.Active ? { Name: u.Name } : null)",
        "map('Users', u => { if (u.Active) return [null, { Also: u.Name }, undefined]; })",
      ],
    });
    const orders = program.map('Orders', [
      doc('orders/1', 'Orders', {
        Lines: [
          { Product: 'products/1', Quantity: 2 },
          { Product: 'products/2', Quantity: 5 },
        ],
      }),
      doc('orders/2', 'Orders', { Lines: [] }),
    ]);
    expect(entriesOf(orders[0])).toEqual([
      { Product: 'products/1', Qty: 2 },
      { Product: 'products/2', Qty: 5 },
    ]);
    expect(entriesOf(orders[1])).toEqual([]);

    const users = program.map('Users', [
      doc('users/1', 'Users', { Name: 'Ann', Active: true }),
      doc('users/2', 'Users', { Name: 'Bob', Active: false }),
    ]);
    expect(entriesOf(users[0])).toEqual([{ Name: 'Ann' }, { Also: 'Ann' }]);
    expect(entriesOf(users[1])).toEqual([]);
  });

  it('returns plain JSON data: functions and undefined dropped, Dates as ISO strings', () => {
    const program = compile({
      maps: [
        "map('Users', u => ({ Name: u.Name, Fn: () => 1, Missing: undefined, When: new Date(Date.UTC(2024, 0, 2)), Nested: { n: NaN } }))",
      ],
    });
    const [entry] = entriesOf(program.map('Users', [doc('users/1', 'Users', { Name: 'Ann' })])[0]);
    expect(entry).toEqual({ Name: 'Ann', When: '2024-01-02T00:00:00.000Z', Nested: { n: null } });
    expect(Object.keys(entry ?? {})).not.toContain('Fn');
  });

  it('reports entries that cannot become JSON as that document’s error', () => {
    const program = compile({
      maps: [
        "map('Users', u => { if (u.Kind === 'cycle') { const o = {}; o.self = o; return o; } if (u.Kind === 'big') return { n: 1n }; return { Name: u.Name }; })",
      ],
    });
    const out = program.map('Users', [
      doc('users/1', 'Users', { Kind: 'cycle' }),
      doc('users/2', 'Users', { Kind: 'big' }),
      doc('users/3', 'Users', { Name: 'Ann' }),
    ]);
    expect(errorOf(out[0])).toMatch(/^TypeError: .*circular/i);
    expect(errorOf(out[1])).toMatch(/^TypeError: .*BigInt/);
    expect(entriesOf(out[2])).toEqual([{ Name: 'Ann' }]);
  });

  it('is not fooled by tenant code replacing built-ins', () => {
    const program = compile({
      maps: [
        "JSON.stringify = () => 'garbage'; JSON.parse = () => 42; map('Users', u => ({ Name: u.Name }))",
      ],
    });
    expect(program.collections).toEqual(['Users']);
    expect(entriesOf(program.map('Users', [doc('users/1', 'Users', { Name: 'Ann' })])[0])).toEqual([
      { Name: 'Ann' },
    ]);

    const broken = compile({ maps: ["Array.prototype.join = () => '{not json'; map('Users', u => ({}))"] });
    const err = catchSandboxError(() => broken.map('Users', [doc('users/1', 'Users', {})]));
    expect(err.code).toBe('IndexRuntimeError');
  });

  it('passes @metadata and offers the id() helper', () => {
    const program = compile({
      maps: ["map('Users', u => ({ Id: id(u), Collection: u['@metadata']['@collection'] }))"],
    });
    const out = program.map('Users', [doc('users/1-A', 'Users', {}), { Name: 'no metadata' }]);
    expect(entriesOf(out[0])).toEqual([{ Id: 'users/1-A', Collection: 'Users' }]);
    expect(errorOf(out[1])).toMatch(/id\(doc\)/);
  });

  it('offers createSpatialField(lat, lng)', () => {
    const program = compile({
      maps: ["map('Places', p => ({ Name: p.Name, Location: createSpatialField(p.Lat, p.Lng) }))"],
    });
    const out = program.map('Places', [
      doc('places/1', 'Places', { Name: 'Oslo', Lat: 59.91, Lng: 10.75 }),
      doc('places/2', 'Places', { Name: 'Nowhere', Lat: null, Lng: null }),
      doc('places/3', 'Places', { Name: 'Bad', Lat: 123, Lng: 0 }),
    ]);
    expect(entriesOf(out[0])).toEqual([
      { Name: 'Oslo', Location: { '@spatial': true, lat: 59.91, lng: 10.75 } },
    ]);
    expect(entriesOf(out[1])).toEqual([{ Name: 'Nowhere', Location: null }]);
    expect(errorOf(out[2])).toMatch(/invalid coordinates/);
  });

  it('isolates a throwing document from its neighbours', () => {
    const program = compile({ maps: ["map('Users', u => ({ First: u.Name.First }))"] });
    const out = program.map('Users', [
      doc('users/1', 'Users', { Name: { First: 'Ann' } }),
      doc('users/2', 'Users', {}),
      doc('users/3', 'Users', { Name: { First: 'Cid' } }),
    ]);
    expect(entriesOf(out[0])).toEqual([{ First: 'Ann' }]);
    expect(errorOf(out[1])).toMatch(
      /^TypeError: Cannot read properties of undefined.*\(at maps\[0\] line 1, column \d+\)/,
    );
    expect(entriesOf(out[2])).toEqual([{ First: 'Cid' }]);
  });

  it('reports a map returning a non-object as that document’s error', () => {
    const program = compile({ maps: ["map('Users', u => u.Name)"] });
    const out = program.map('Users', [doc('users/1', 'Users', { Name: 'Ann' })]);
    expect(errorOf(out[0])).toMatch(/must return an object, an array of objects, or null; got string/);
  });

  it('reports load() as not supported', () => {
    const program = compile({ maps: ["map('Orders', o => ({ Company: load(o.Company).Name }))"] });
    const out = program.map('Orders', [doc('orders/1', 'Orders', { Company: 'companies/1' })]);
    expect(errorOf(out[0])).toContain('load() of related documents is not supported yet');
  });

  it('has no Node.js or browser globals: process.exit() and require() fail per document', () => {
    const program = compile({
      maps: [
        "map('Users', u => { if (u.Kind === 'exit') process.exit(1); if (u.Kind === 'fs') require('fs'); if (u.Kind === 'fetch') globalThis.fetch('http://x'); if (u.Kind === 'timer') setTimeout(() => {}, 1); return { Name: u.Name }; })",
      ],
    });
    const out = program.map('Users', [
      doc('users/1', 'Users', { Kind: 'exit' }),
      doc('users/2', 'Users', { Kind: 'fs' }),
      doc('users/3', 'Users', { Kind: 'fetch' }),
      doc('users/4', 'Users', { Kind: 'timer' }),
      doc('users/5', 'Users', { Name: 'fine' }),
    ]);
    expect(errorOf(out[0])).toMatch(
      /^ReferenceError: process is not defined.*isolated sandbox without Node\.js/,
    );
    expect(errorOf(out[1])).toMatch(/^ReferenceError: require is not defined/);
    expect(errorOf(out[2])).toMatch(/^TypeError: globalThis\.fetch is not a function/);
    expect(errorOf(out[3])).toMatch(/^ReferenceError: setTimeout is not defined/);
    expect(entriesOf(out[4])).toEqual([{ Name: 'fine' }]);
    expect(typeof process.exit).toBe('function'); // and the host is obviously still here
  });
});

describe('compileJsIndex: compilation failures', () => {
  it('reports syntax errors with the source and line', () => {
    const err = catchSandboxError(() =>
      compileJsIndex({
        maps: ["map('Users', u => ({ Name: u.Name }))", "map('Orders', o => {\n  return o.;\n})"],
      }),
    );
    expect(err.code).toBe('IndexCompilationFailed');
    expect(err.message).toMatch(/^Syntax error in maps\[1\]: .* \(maps\[1\] line 2, column \d+\)$/);
  });

  it('reports top-level access to missing globals', () => {
    const err = catchSandboxError(() =>
      compileJsIndex({ maps: ["const fs = require('fs');\nmap('Users', u => ({}))"] }),
    );
    expect(err.code).toBe('IndexCompilationFailed');
    expect(err.message).toMatch(/ReferenceError: require is not defined \(at maps\[0\] line 1, column \d+\)/);
    expect(catchSandboxError(() => compileJsIndex({ maps: ['process.exit(0)'] })).code).toBe(
      'IndexCompilationFailed',
    );
  });

  it('rejects definitions that register nothing or misuse the helpers', () => {
    expect(catchSandboxError(() => compileJsIndex({ maps: [] })).message).toMatch(/at least one map/);
    expect(catchSandboxError(() => compileJsIndex({ maps: ['const x = 1;'] })).message).toMatch(
      /maps\[0\] never calls map/,
    );
    expect(catchSandboxError(() => compileJsIndex({ maps: ["map('Users', 42)"] })).message).toMatch(
      /fn must be a function/,
    );
    const noAggregate = catchSandboxError(() =>
      compileJsIndex({ maps: ["map('Users', u => ({}))"], reduce: 'groupBy(x => x.Name)' }),
    );
    expect(noAggregate.code).toBe('IndexCompilationFailed');
    expect(noAggregate.message).toMatch(/groupBy\(fn\)\.aggregate\(fn\)/);
  });
});

describe('compileJsIndex: reduce', () => {
  it('groups by a scalar key and aggregates', () => {
    const program = compile({
      maps: [
        "map('Orders', o => o.Lines.map(l => ({ Company: o.Company, Total: l.Price * l.Quantity, Count: 1 })))",
      ],
      reduce: ordersReduce,
    });
    expect(program.hasReduce).toBe(true);
    const outcomes = program.map('Orders', [
      doc('orders/1', 'Orders', {
        Company: 'companies/1',
        Lines: [
          { Price: 10, Quantity: 2 },
          { Price: 5, Quantity: 1 },
        ],
      }),
      doc('orders/2', 'Orders', { Company: 'companies/2', Lines: [{ Price: 7, Quantity: 3 }] }),
    ]);
    const entries = outcomes.flatMap(entriesOf);
    const keys = program.reduceKeys(entries);
    expect(keys).toEqual(['"companies/1"', '"companies/1"', '"companies/2"']);

    const groups = new Map<string, Record<string, unknown>[]>();
    entries.forEach((entry, i) => {
      const key = keys[i] ?? '';
      groups.set(key, [...(groups.get(key) ?? []), entry]);
    });
    const results = program.reduce([...groups.values()]);
    expect(results).toEqual([
      { Company: 'companies/1', Total: 25, Count: 2 },
      { Company: 'companies/2', Total: 21, Count: 1 },
    ]);
    // Re-reduce: results have the shape of map entries and reduce again.
    expect(program.reduce([results.map((r) => ({ ...r, Company: 'companies/1' }))])).toEqual([
      { Company: 'companies/1', Total: 46, Count: 2 },
    ]);
  });

  it('groups by an object key with a canonical JSON key', () => {
    const program = compile({
      maps: ["map('Downloads', d => ({ PackageId: d.PackageId, IsPrerelease: d.IsPrerelease, Count: 1 }))"],
      reduce:
        'groupBy(x => ({ PackageId: x.PackageId, IsPrerelease: x.IsPrerelease })).aggregate(g => ({ PackageId: g.key.PackageId, IsPrerelease: g.key.IsPrerelease, Count: g.values.reduce((s, v) => s + v.Count, 0) }))',
    });
    const keys = program.reduceKeys([
      { PackageId: 'rookery', IsPrerelease: false, Count: 1 },
      { IsPrerelease: false, PackageId: 'rookery', Count: 1 },
    ]);
    expect(keys).toEqual([
      '{"IsPrerelease":false,"PackageId":"rookery"}',
      '{"IsPrerelease":false,"PackageId":"rookery"}',
    ]);
    expect(
      program.reduce([
        [
          { PackageId: 'rookery', IsPrerelease: false, Count: 1 },
          { PackageId: 'rookery', IsPrerelease: false, Count: 4 },
        ],
      ]),
    ).toEqual([{ PackageId: 'rookery', IsPrerelease: false, Count: 5 }]);
  });

  it('sorts object keys at every depth: {b:1,a:2} and {a:2,b:1} give the same key', () => {
    const program = compile({
      maps: ["map('X', x => x)"],
      reduce: 'groupBy(x => x.k).aggregate(g => ({ k: g.key }))',
    });
    const [first, second, third] = program.reduceKeys([
      { k: { b: 1, a: 2 } },
      { k: { a: 2, b: 1 } },
      { k: { a: 2, b: { d: [1, { z: 1, y: 2 }], c: null } } },
    ]);
    expect(first).toBe('{"a":2,"b":1}');
    expect(second).toBe(first);
    expect(third).toBe('{"a":2,"b":{"c":null,"d":[1,{"y":2,"z":1}]}}');
    expect(program.reduceKeys([{ k: undefined }, { k: 3 }])).toEqual(['null', '3']);
  });

  it('reports failures of the tenant’s reduce functions as IndexRuntimeError', () => {
    const program = compile({
      maps: ["map('X', x => x)"],
      reduce: 'groupBy(x => x.a.b).aggregate(g => { throw new Error("nope"); })',
    });
    const keyErr = catchSandboxError(() => program.reduceKeys([{ a: { b: 1 } }, {}]));
    expect(keyErr.code).toBe('IndexRuntimeError');
    expect(keyErr.message).toMatch(
      /entry #1: TypeError: Cannot read properties of undefined .*\(at reduce line 1/,
    );
    const reduceErr = catchSandboxError(() => program.reduce([[{ a: { b: 1 } }]]));
    expect(reduceErr.code).toBe('IndexRuntimeError');
    expect(reduceErr.message).toMatch(/group #0: Error: nope/);
    // The program keeps working after tenant errors.
    expect(program.reduceKeys([{ a: { b: 'ok' } }])).toEqual(['"ok"']);
  });

  it('refuses reduce calls on a map-only index', () => {
    const program = compile({ maps: ["map('X', x => x)"] });
    expect(catchSandboxError(() => program.reduceKeys([{}])).message).toMatch(/no reduce definition/);
  });
});

describe('compileJsIndex: limits', () => {
  it('stops a document at its time limit and names it; its neighbours and new programs keep working', () => {
    const program = compile(
      { maps: ["map('Users', u => { if (u.Spin) { while (true) {} } return { Name: u.Name }; })"] },
      { documentTimeoutMs: 100 },
    );
    const out = program.map('Users', [
      doc('users/1', 'Users', { Name: 'Ann' }),
      doc('users/2', 'Users', { Spin: true }),
      doc('users/3', 'Users', { Name: 'Bo' }),
    ]);
    expect(out).toHaveLength(3);
    expect(entriesOf(out[0])).toEqual([{ Name: 'Ann' }]);
    expect(errorOf(out[1])).toMatch(/100 ms time limit per document/);
    expect(errorOf(out[1])).toMatch(/infinite loops/);
    expect(entriesOf(out[2])).toEqual([{ Name: 'Bo' }]);

    // The same program is still usable for well-behaved documents ...
    expect(entriesOf(program.map('Users', [doc('users/3', 'Users', { Name: 'Cid' })])[0])).toEqual([
      { Name: 'Cid' },
    ]);
    // ... and a new program compiles and runs.
    const fresh = compile({ maps: ["map('Users', u => ({ Name: u.Name }))"] });
    expect(entriesOf(fresh.map('Users', [doc('users/4', 'Users', { Name: 'Dee' })])[0])).toEqual([
      { Name: 'Dee' },
    ]);
  });

  it('gives each document its own time limit, however long the batch takes', () => {
    // 20 documents of at least 15 ms each: far over one document's 100 ms, each well under it.
    const program = compile(
      {
        maps: [
          "map('Users', u => { const end = Date.now() + 15; while (Date.now() < end) {} return { N: u.N }; })",
        ],
      },
      { documentTimeoutMs: 100 },
    );
    const out = program.map(
      'Users',
      Array.from({ length: 20 }, (_, i) => doc(`users/${i}`, 'Users', { N: i })),
    );
    expect(out.map((o) => entriesOf(o)[0])).toEqual(Array.from({ length: 20 }, (_, i) => ({ N: i })));
  });

  it('stops at a deadline with a prefix of the outcomes, never none', () => {
    const program = compile({
      maps: [
        "map('Users', u => { const end = Date.now() + 5; while (Date.now() < end) {} return { N: u.N }; })",
      ],
    });
    const docs = Array.from({ length: 10 }, (_, i) => doc(`users/${i}`, 'Users', { N: i }));
    // A deadline already passed: one document still gets mapped, so a caller always moves on.
    const out = program.map('Users', docs, Date.now() - 1);
    expect(out).toHaveLength(1);
    expect(entriesOf(out[0])).toEqual([{ N: 0 }]);
  });

  it('refuses a document emitting more entries than the limit, naming the limit', () => {
    const program = compile(
      { maps: ["map('Users', u => Array.from({ length: u.Fan }, (_, i) => ({ I: i })))"] },
      // Time limits far above what building 200,000 entries takes on a loaded machine: this test is about
      // the entries limit (with the default 250 ms per document, a starved run was stopped by time first).
      { maxEntriesPerDocument: 50, timeoutMs: 10_000, documentTimeoutMs: 10_000 },
    );
    const out = program.map('Users', [
      doc('users/1', 'Users', { Fan: 50 }),
      doc('users/2', 'Users', { Fan: 200_000 }),
    ]);
    expect(entriesOf(out[0])).toHaveLength(50);
    expect(errorOf(out[1])).toMatch(/more than 50 entries for this document/);
  });

  it('stops an infinite loop at the top level of a definition', () => {
    const err = catchSandboxError(() => compileJsIndex({ maps: ['while (true) {}'] }, { timeoutMs: 50 }));
    expect(err.code).toBe('IndexTimeLimitExceeded');
  });

  it('disposes the isolate on unbounded allocation; later calls fail clearly and the host survives', () => {
    const program = compile(
      { maps: ["map('Users', u => { const a = []; while (true) a.push(new Array(1e6).fill(1)); })"] },
      // Time limits far above what filling 32 MB takes on a loaded machine: this test is about memory (with
      // the default 250 ms per document, a starved allocation loop could be stopped by time first).
      { memoryMb: 32, timeoutMs: 10_000, documentTimeoutMs: 10_000 },
    );
    const err = catchSandboxError(() => program.map('Users', [doc('users/1', 'Users', {})]));
    expect(err.code).toBe('IndexMemoryLimitExceeded');
    expect(err.message).toMatch(/32 MB memory limit/);

    const again = catchSandboxError(() => program.map('Users', [doc('users/1', 'Users', {})]));
    expect(again.code).toBe('IndexMemoryLimitExceeded');
    expect(again.message).toMatch(/compile the index again/);
    program.dispose(); // harmless after the isolate is gone

    const fresh = compile({ maps: ["map('Users', u => ({ Name: u.Name }))"] });
    expect(entriesOf(fresh.map('Users', [doc('users/2', 'Users', { Name: 'Eve' })])[0])).toEqual([
      { Name: 'Eve' },
    ]);
  });

  it('throws clearly after dispose()', () => {
    const program = compileJsIndex({ maps: ["map('Users', u => ({}))"] });
    program.dispose();
    program.dispose();
    expect(catchSandboxError(() => program.map('Users', [{}])).message).toMatch(/disposed/);
  });

  it('validates the limits', () => {
    expect(() => compileJsIndex({ maps: ["map('X', x => x)"] }, { memoryMb: 4 })).toThrow(RangeError);
    expect(() => compileJsIndex({ maps: ["map('X', x => x)"] }, { timeoutMs: 0 })).toThrow(RangeError);
    expect(() => compileJsIndex({ maps: ["map('X', x => x)"] }, { documentTimeoutMs: -1 })).toThrow(
      RangeError,
    );
    expect(() => compileJsIndex({ maps: ["map('X', x => x)"] }, { maxEntriesPerDocument: 0 })).toThrow(
      RangeError,
    );
  });
});
