// A real engine database mirrored to a real mirror directory, a workload that touches documents,
// deletions, patches, compressed bodies and index definitions, and the two views a restore must
// reproduce: every document (and tombstone) as stored, and the answers of index queries.
import path from 'node:path';
import { Database, DatabaseIndexer, IndexCatalog, type IndexingControl, QueryRunner } from '@rookery/engine';
import type { Command, IndexDefinition } from '@rookery/protocol';

export const TENANT = 'acme';
export const DATABASE = 'shop';

export function mirrorDirectoryOf(mirrorRoot: string, tenant = TENANT, database = DATABASE): string {
  return path.join(mirrorRoot, tenant, database.toLowerCase());
}

/** Creates `<local>/shop` mirrored (sync mode: what is acknowledged is on the mirror) to `<mirror root>/acme/shop`. */
export function createMirroredDatabase(local: string, mirrorRoot: string, clock?: () => number): Database {
  return Database.create(path.join(local, DATABASE), DATABASE, {
    mirror: { directory: mirrorDirectoryOf(mirrorRoot), mode: 'sync', flushIntervalMs: 5 },
    ...(clock ? { clock } : {}),
  });
}

export const INDEXES: IndexDefinition[] = [
  {
    Name: 'Orders/ByCustomer',
    Maps: [{ Collection: 'Orders', Fields: { Customer: 'Customer', Total: 'Total' } }],
  },
  {
    Name: 'Products/Search',
    Maps: [{ Collection: 'Products', Fields: { Title: 'Title', Price: 'Price' } }],
    Fields: { Title: { Indexing: 'Search', Suggestions: true } },
  },
];

export const QUERIES = [
  "from Orders where Customer = 'customers/3' order by Total desc",
  "from index 'Orders/ByCustomer' where Total between 100 and 400 order by Total",
  "from index 'Orders/ByCustomer' select facet(Customer)",
  "from index 'Products/Search' where search(Title, 'red lamp')",
  'from Products order by Price desc limit 5',
  'from Orders',
];

/** One step of writes: `step` makes each step's documents different. Several batches run at once. */
export async function writeStep(db: Database, step: number): Promise<void> {
  const batches: Command[][] = [];
  for (let i = 0; i < 6; i++) {
    const n = step * 10 + i;
    batches.push([
      {
        Type: 'PUT',
        Id: `orders/${n}`,
        Document: {
          Customer: `customers/${n % 5}`,
          Total: (n * 37) % 500,
          '@metadata': { '@collection': 'Orders' },
        },
      },
      {
        Type: 'PUT',
        Id: `products/${n % 17}`,
        Document: {
          Title: `${['red', 'blue', 'green'][n % 3]} ${['lamp', 'chair', 'desk'][step % 3]} ${n}`,
          Price: n % 90,
          // Every fifth is long enough to be stored compressed.
          Notes: 'lorem ipsum '.repeat(n % 5 === 0 ? 600 : 3),
          '@metadata': { '@collection': 'Products' },
        },
      },
    ]);
  }
  if (step > 0) {
    batches.push([{ Type: 'DELETE', Id: `orders/${(step - 1) * 10 + 2}` }]);
    batches.push([
      { Type: 'PATCH', Id: 'counters/1', Patch: { Operations: [{ Op: 'increment', Path: 'N', By: step }] } },
    ]);
  }
  await Promise.all(batches.map((batch) => db.batch(batch)));
}

export async function prepareDatabase(db: Database): Promise<void> {
  for (const index of INDEXES) await db.putIndexDefinition(index);
  await db.batch([{ Type: 'PUT', Id: 'counters/1', Document: { N: 0 } }]);
}

/** Every document as stored (body, change vector, etag) and every tombstone, in etag order. */
export function documentsOf(db: Database) {
  const documents = db.collectionPage(null, 0, 1_000_000).map((d) => ({ ...d }));
  const changes = db.changesAfter(0, 1_000_000);
  return { documents, changes, lastEtag: db.lastEtag, indexes: db.indexDefinitions() };
}

/**
 * Runs `QUERIES` on a database the way the tenant does, with an in-process indexer that indexes
 * whatever index definitions the database holds (as a tenant does on a restored database).
 */
export async function queryResultsOf(db: Database): Promise<unknown[]> {
  const indexer = new DatabaseIndexer(db.directory);
  const catalog = new IndexCatalog(db.directory);
  try {
    for (const definition of db.indexDefinitions()) indexer.put(definition);
    indexer.runUntilIdle();
    const control: IndexingControl = {
      async putIndex(definition) {
        indexer.put(definition);
        indexer.runUntilIdle();
      },
      async waitForNonStale() {
        indexer.runUntilIdle();
        return true;
      },
      retireWhenCaughtUp() {},
    };
    const runner = new QueryRunner(db, catalog, control);
    const results: unknown[] = [];
    for (const query of QUERIES) {
      const prepared = await runner.prepare({ query, waitForNonStaleResults: true });
      // Timings differ from run to run; everything else must be equal.
      const {
        Timings: _timings,
        DurationInMs: _ms,
        ...result
      } = runner.run(prepared).result as {
        Timings?: unknown;
        DurationInMs?: number;
      };
      results.push(result);
    }
    return results;
  } finally {
    catalog.close();
    indexer.close();
  }
}
