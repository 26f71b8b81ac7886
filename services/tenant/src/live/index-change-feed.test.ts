import { expect, it } from 'vitest';
import { type IndexChange, IndexChangeFeed } from './index-change-feed.js';

it('delivers to the database’s listeners only, until they unsubscribe', () => {
  const feed = new IndexChangeFeed();
  const shop: IndexChange[] = [];
  const other: IndexChange[] = [];
  const stop = feed.subscribe('Shop', (c) => shop.push(c));
  feed.subscribe('other', (c) => other.push(c));
  feed.publish('shop', { Name: 'A', Type: 'BatchCompleted', Etag: 1 });
  stop();
  feed.publish('shop', { Name: 'A', Type: 'BatchCompleted', Etag: 2 });
  expect(shop.map((c) => c.Etag)).toEqual([1]);
  expect(other).toEqual([]);
});

it('holds an index’s batches while it is being defined, and sends IndexAdded first', () => {
  const feed = new IndexChangeFeed();
  const seen: string[] = [];
  feed.subscribe('shop', (c) => seen.push(`${c.Name}:${c.Type}`));
  const held = feed.hold('shop', 'Users/ByName');
  feed.publish('shop', { Name: 'users/byname', Type: 'BatchCompleted', Etag: 3 });
  feed.publish('shop', { Name: 'Other', Type: 'BatchCompleted', Etag: 3 });
  held.release({ Name: 'Users/ByName', Type: 'IndexAdded', Etag: 2 });
  expect(seen).toEqual(['Other:BatchCompleted', 'Users/ByName:IndexAdded', 'users/byname:BatchCompleted']);
  // A failed definition releases what was held (the index that was there before still runs).
  const failed = feed.hold('shop', 'Users/ByName');
  feed.publish('shop', { Name: 'Users/ByName', Type: 'BatchCompleted', Etag: 4 });
  failed.release();
  expect(seen.at(-1)).toBe('Users/ByName:BatchCompleted');
});
