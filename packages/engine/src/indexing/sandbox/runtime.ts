// The JavaScript that runs *inside* the index isolate before any tenant code.
//
// It is kept as source text (not a TypeScript function turned into a string) so that no compiler or
// bundler can inject helpers into it. It evaluates to a single dispatcher function, handed to the host
// as an isolated-vm Reference and never stored on the global object, so tenant code cannot reach it.
//
// Protocol: every host call passes strings in and gets one string back.
//   dispatch('begin', kind, index)      before evaluating maps[index] ('map') or the reduce ('reduce')
//   dispatch('end')                     after evaluating it; returns '' or a definition error
//   dispatch('info')                    {"collections":[...],"hasReduce":bool}
//   dispatch('limits', maxEntries)      the most entries one document's maps may emit (set once)
//   dispatch('mapLoad', collection, json)  json = array of docs, kept here until mapped; returns ''
//   dispatch('mapRun', sliceMs)         maps loaded docs from the cursor, one after another, and starts no
//                                       new one once sliceMs have passed in this call; returns the outcomes
//                                       it produced, [{ok,entries}|{ok,error}, ...] (possibly none left)
//   dispatch('mapTake')                 after the host stopped a mapRun at its time limit: the outcomes it
//                                       finished before the document it was stopped in
//   dispatch('mapSkip')                 moves the cursor past that document (the host records its error)
//   dispatch('mapClear')                forgets the loaded docs
//   dispatch('reduceKeys', json)        json = array of entries; returns {ok:true,value:[key,...]}|{ok:false,error}
//   dispatch('reduce', json)            json = array of groups; returns {ok:true,value:[result,...]}|{ok:false,error}

/** Appended to "x is not defined" errors so tenants know why `process`, `require`, ... are missing. */
export const MISSING_GLOBAL_HINT =
  'Index code runs in an isolated sandbox without Node.js or browser globals ' +
  '(process, require, fetch, setTimeout, ...); only plain JavaScript and the index helpers ' +
  '(map, groupBy, id, createSpatialField) are available.';

export const RUNTIME_FILENAME = 'rookery-index-runtime.js';

export const RUNTIME_SOURCE = `(function () {
  'use strict';
  const g = globalThis;
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const isArray = Array.isArray;
  const keysOf = Object.keys;
  const createObject = Object.create;
  const ErrorCtor = Error;
  const ReferenceErrorCtor = ReferenceError;
  const StringCtor = String;
  const NumberCtor = Number;
  const isFiniteNumber = Number.isFinite;
  const HINT = ${JSON.stringify(MISSING_GLOBAL_HINT)};

  // Shared memory and WebAssembly are not needed by index code and allocate outside the JS heap.
  delete g.SharedArrayBuffer;
  delete g.Atomics;
  delete g.WebAssembly;

  const maps = [];
  let reduceDef = null;
  let maxEntries = 10000;
  const now = Date.now;
  // The documents of the current mapLoad and the mapping's progress through them: outcomes are kept
  // here by position until taken, so a mapRun stopped at its time limit loses none of them.
  let loaded = null;
  let cursor = 0;
  let taken = 0;
  const outcomes = [];
  let phase = 'setup';
  let sourceIndex = -1;
  let registered = 0;

  function fail(message) {
    throw new TypeError(message);
  }

  function safeString(value) {
    try {
      return StringCtor(value);
    } catch (e) {
      return typeof value;
    }
  }

  function locate(stack) {
    if (typeof stack !== 'string') return '';
    const m = /\\b(map-(\\d+)|reduce)\\.js:(\\d+):(\\d+)/.exec(stack);
    if (m === null) return '';
    const where = m[2] === undefined ? 'reduce' : 'maps[' + m[2] + ']';
    return where + ' line ' + m[3] + ', column ' + m[4];
  }

  function describeError(e) {
    try {
      if (e instanceof ErrorCtor) {
        let text = safeString(e.name) + ': ' + safeString(e.message);
        const where = locate(e.stack);
        if (where !== '') text += ' (at ' + where + ')';
        if (e instanceof ReferenceErrorCtor && / is not defined$/.test(safeString(e.message))) {
          text += '. ' + HINT;
        }
        return text;
      }
      return 'Uncaught ' + safeString(e);
    } catch (inner) {
      return 'Uncaught exception (it could not be described)';
    }
  }

  function isThenable(value) {
    return typeof value.then === 'function';
  }

  g.map = function map(collection, fn) {
    if (phase !== 'map') {
      fail(phase === 'reduce'
        ? 'map() belongs in a map definition, not in the reduce definition'
        : 'map() may only be called at the top level of a map definition');
    }
    if (typeof collection !== 'string' || collection.length === 0) {
      fail('map(collection, fn): collection must be a non-empty string');
    }
    if (typeof fn !== 'function') fail('map(collection, fn): fn must be a function');
    maps[maps.length] = { collection: collection, fn: fn };
    registered++;
  };

  g.groupBy = function groupBy(keyFn) {
    if (phase !== 'reduce') {
      fail(phase === 'map'
        ? 'groupBy() belongs in the reduce definition, not in a map definition'
        : 'groupBy() may only be called at the top level of the reduce definition');
    }
    if (typeof keyFn !== 'function') fail('groupBy(fn): fn must be a function');
    return {
      aggregate: function aggregate(aggregateFn) {
        if (phase !== 'reduce') fail('aggregate() may only be called at the top level of the reduce definition');
        if (typeof aggregateFn !== 'function') fail('groupBy(...).aggregate(fn): fn must be a function');
        if (reduceDef !== null) fail('the reduce definition may call groupBy(...).aggregate(...) only once');
        reduceDef = { keyFn: keyFn, aggregateFn: aggregateFn };
        registered++;
      },
    };
  };

  g.id = function id(doc) {
    const meta = doc !== null && typeof doc === 'object' ? doc['@metadata'] : undefined;
    const value = meta !== null && typeof meta === 'object' ? meta['@id'] : undefined;
    if (typeof value !== 'string') fail('id(doc): the argument is not a document with @metadata.@id');
    return value;
  };

  g.createSpatialField = function createSpatialField(lat, lng) {
    if (arguments.length < 2) {
      fail('createSpatialField(lat, lng): WKT shapes are not supported yet; pass a latitude and a longitude');
    }
    if (lat === null || lat === undefined || lng === null || lng === undefined) return null;
    const la = NumberCtor(lat);
    const lo = NumberCtor(lng);
    if (!isFiniteNumber(la) || !isFiniteNumber(lo) || la < -90 || la > 90 || lo < -180 || lo > 180) {
      throw new RangeError(
        'createSpatialField(lat, lng): invalid coordinates (' + safeString(lat) + ', ' + safeString(lng) + ')',
      );
    }
    return { '@spatial': true, lat: la, lng: lo };
  };

  g.load = function load() {
    throw new ErrorCtor('load() of related documents is not supported yet');
  };

  function collect(result, out, collection) {
    if (result === null || result === undefined) return;
    if (isArray(result)) {
      const n = result.length;
      for (let i = 0; i < n; i++) {
        const item = result[i];
        if (item === null || item === undefined) continue;
        checkEntry(item, collection);
        add(out, item);
      }
      return;
    }
    checkEntry(result, collection);
    add(out, result);
  }

  function add(out, entry) {
    if (out.length >= maxEntries) {
      fail('the maps emitted more than ' + maxEntries + ' entries for this document (the limit per document); ' +
        'emit fewer entries, e.g. one entry with array fields instead of one entry per item');
    }
    out[out.length] = entry;
  }

  function checkEntry(entry, collection) {
    if (typeof entry !== 'object' || isArray(entry)) {
      fail('the map of ' + stringify(collection) + ' must return an object, an array of objects, or null; got ' +
        (isArray(entry) ? 'a nested array' : typeof entry));
    }
    if (isThenable(entry)) fail('map functions must be synchronous (got a Promise)');
  }

  function mapLoad(collection, json) {
    const fns = [];
    for (let k = 0; k < maps.length; k++) {
      if (maps[k].collection === collection) fns[fns.length] = maps[k].fn;
    }
    loaded = { collection: collection, docs: parse(json), fns: fns };
    cursor = 0;
    taken = 0;
    outcomes.length = 0;
    return '';
  }

  function mapDocument(collection, fns, doc) {
    try {
      const out = [];
      // Each map of the same collection gets its own copy, so one map mutating the doc cannot affect another.
      const docJson = fns.length > 1 ? stringify(doc) : '';
      for (let k = 0; k < fns.length; k++) {
        const fn = fns[k];
        collect(fn(k === 0 ? doc : parse(docJson)), out, collection);
      }
      return '{"ok":true,"entries":' + stringify(out) + '}';
    } catch (e) {
      return '{"ok":false,"error":' + stringify(describeError(e)) + '}';
    }
  }

  function mapRun(sliceMs) {
    if (loaded === null) fail('no documents are loaded');
    const started = now();
    const docs = loaded.docs;
    const n = docs.length;
    let ran = 0;
    while (cursor < n) {
      // The host stops this call at sliceMs plus the per-document limit: a document started before
      // sliceMs and still running then has had the whole per-document limit to itself.
      if (ran > 0 && now() - started >= sliceMs) break;
      const i = cursor;
      outcomes[i] = mapDocument(loaded.collection, loaded.fns, docs[i]);
      docs[i] = null;
      cursor = i + 1;
      ran++;
    }
    return mapTake();
  }

  function mapTake() {
    const parts = outcomes.slice(taken, cursor);
    for (let i = taken; i < cursor; i++) outcomes[i] = undefined;
    taken = cursor;
    return '[' + parts.join(',') + ']';
  }

  function mapSkip() {
    if (loaded !== null && cursor < loaded.docs.length) {
      loaded.docs[cursor] = null;
      cursor++;
      taken = cursor;
    }
    return '';
  }

  function mapClear() {
    loaded = null;
    outcomes.length = 0;
    cursor = 0;
    taken = 0;
    return '';
  }

  function sortKeys(value) {
    if (isArray(value)) {
      const n = value.length;
      const copy = new Array(n);
      for (let i = 0; i < n; i++) copy[i] = sortKeys(value[i]);
      return copy;
    }
    if (value !== null && typeof value === 'object') {
      const sorted = createObject(null);
      const keys = keysOf(value).sort();
      for (let i = 0; i < keys.length; i++) sorted[keys[i]] = sortKeys(value[keys[i]]);
      return sorted;
    }
    return value;
  }

  // Canonical JSON of a group key: JSON semantics (toJSON, Dates, dropped undefined) and sorted object keys.
  function canonicalKey(key) {
    const text = stringify(key);
    if (text === undefined) return 'null';
    return stringify(sortKeys(parse(text)));
  }

  function ok(value) {
    return '{"ok":true,"value":' + value + '}';
  }

  function failed(message) {
    return '{"ok":false,"error":' + stringify(message) + '}';
  }

  function requireReduce() {
    if (reduceDef === null) fail('this index has no reduce definition');
  }

  function runReduceKeys(json) {
    requireReduce();
    const entries = parse(json);
    const n = entries.length;
    const keys = new Array(n);
    for (let i = 0; i < n; i++) {
      try {
        keys[i] = canonicalKey(reduceDef.keyFn(entries[i]));
      } catch (e) {
        return failed('groupBy() failed for entry #' + i + ': ' + describeError(e));
      }
    }
    return ok(stringify(keys));
  }

  function runReduce(json) {
    requireReduce();
    const groups = parse(json);
    const n = groups.length;
    const parts = new Array(n);
    for (let i = 0; i < n; i++) {
      try {
        const values = groups[i];
        if (!isArray(values) || values.length === 0) fail('group #' + i + ' is empty');
        const key = parse(canonicalKey(reduceDef.keyFn(values[0])));
        const result = reduceDef.aggregateFn({ key: key, values: values });
        if (result === null || typeof result !== 'object' || isArray(result)) {
          fail('aggregate() must return an object; got ' + (result === null ? 'null' : isArray(result) ? 'an array' : typeof result));
        }
        if (isThenable(result)) fail('aggregate() must be synchronous (got a Promise)');
        const text = stringify(result);
        if (text === undefined || text[0] !== '{') fail('aggregate() must return a JSON object');
        parts[i] = text;
      } catch (e) {
        return failed('reduce failed for group #' + i + ': ' + describeError(e));
      }
    }
    return ok('[' + parts.join(',') + ']');
  }

  function info() {
    const collections = [];
    for (let k = 0; k < maps.length; k++) {
      if (collections.indexOf(maps[k].collection) < 0) collections[collections.length] = maps[k].collection;
    }
    return stringify({ collections: collections, hasReduce: reduceDef !== null });
  }

  return function dispatch(op, a, b) {
    switch (op) {
      case 'begin':
        phase = a;
        sourceIndex = b;
        registered = 0;
        return '';
      case 'end': {
        const kind = phase;
        phase = 'ready';
        if (registered > 0) return '';
        return kind === 'map'
          ? 'maps[' + sourceIndex + '] never calls map(collection, fn)'
          : 'the reduce definition must call groupBy(fn).aggregate(fn)';
      }
      case 'info':
        return info();
      case 'limits':
        maxEntries = a;
        return '';
      case 'mapLoad':
        return mapLoad(a, b);
      case 'mapRun':
        return mapRun(a);
      case 'mapTake':
        return mapTake();
      case 'mapSkip':
        return mapSkip();
      case 'mapClear':
        return mapClear();
      case 'reduceKeys':
        return runReduceKeys(a);
      case 'reduce':
        return runReduce(a);
      default:
        throw new ErrorCtor('unknown sandbox operation ' + safeString(op));
    }
  };
})()`;
