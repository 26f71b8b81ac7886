import { expect, it } from 'vitest';
import { ChangeWatches, MAX_WATCHES_PER_CONNECTION } from './change-watches.js';

const change = (id: string, collection: string) => ({
  type: 'put' as const,
  id,
  collection,
  etag: 1,
  changeVector: 'A:1-x',
});

it('matches ids, prefixes, collections and indexes case-insensitively', () => {
  const watches = new ChangeWatches();
  watches.apply({ Command: 'watch-doc', Param: 'Users/1', CommandId: 1 });
  watches.apply({ Command: 'watch-prefix', Param: 'ORDERS/', CommandId: 2 });
  watches.apply({ Command: 'watch-collection', Param: 'companies', CommandId: 3 });
  watches.apply({ Command: 'watch-index', Param: 'Users/ByName', CommandId: 4 });
  expect(watches.matchesDocument(change('users/1', 'Users'))).toBe(true);
  expect(watches.matchesDocument(change('users/2', 'Users'))).toBe(false);
  expect(watches.matchesDocument(change('orders/7', 'Orders'))).toBe(true);
  expect(watches.matchesDocument(change('x/1', 'Companies'))).toBe(true);
  expect(watches.matchesIndex('users/byname')).toBe(true);
  expect(watches.matchesIndex('Orders/ByDate')).toBe(false);
  watches.apply({ Command: 'watch-all-indexes', CommandId: 5 });
  expect(watches.matchesIndex('Orders/ByDate')).toBe(true);
});

it('refuses a watch past the limit, and takes it again once another is gone', () => {
  const watches = new ChangeWatches();
  for (let i = 0; i < MAX_WATCHES_PER_CONNECTION; i++)
    expect(watches.apply({ Command: 'watch-doc', Param: `docs/${i}`, CommandId: i })).toBe(true);
  expect(watches.apply({ Command: 'watch-prefix', Param: 'more/', CommandId: 0 })).toBe(false);
  // Watching what is already watched adds nothing, so it is not refused.
  expect(watches.apply({ Command: 'watch-doc', Param: 'DOCS/1', CommandId: 0 })).toBe(true);
  watches.apply({ Command: 'unwatch-doc', Param: 'docs/1', CommandId: 0 });
  expect(watches.apply({ Command: 'watch-prefix', Param: 'more/', CommandId: 0 })).toBe(true);
  expect(watches.size).toBe(MAX_WATCHES_PER_CONNECTION);
});
