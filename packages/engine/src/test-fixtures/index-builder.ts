// An indexer process for the bulk build's crash test (indexing/bulk-build.test.ts): builds the
// index whose definition is given (JSON) in the database directory, one batch each time the
// parent says `next`, reporting each batch's last etag, until the parent kills it with SIGKILL.
import type { IndexDefinition } from '@rookery/protocol';
import { DatabaseIndexer } from '../indexing/database-indexer.js';

const [directory, definitionJson, batchSizeArg] = process.argv.slice(2);
if (!directory || !definitionJson || !batchSizeArg)
  throw new Error('usage: index-builder <database dir> <definition JSON> <batch size>');

const definition = JSON.parse(definitionJson) as IndexDefinition;
const indexer = new DatabaseIndexer(directory, { batchSize: Number(batchSizeArg) });
indexer.put(definition);
process.on('message', () => {
  const progress = indexer.runOnce();
  process.send?.({ lastEtag: progress[0]?.lastEtag ?? null });
});
process.send?.({ ready: true });
