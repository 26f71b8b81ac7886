// The prepare thread (see prepare-thread.ts): reads an index's next batch
// from docs.db and prepares it (maps, builds rows) for the indexer's thread
// to write. It never writes anything.
import { parentPort } from 'node:worker_threads';
import type { IndexDefinition } from '@rookery/protocol';
import { BatchPreparer } from './batch-preparer.js';
import { DocumentSource } from './document-source.js';
import { EntryRowsBuilder } from './entry-rows.js';
import { type FromPrepareThread, ToPrepareThreadSchema } from './prepare-thread.js';
import { SandboxError } from './sandbox/index.js';

const port = parentPort;
if (!port) throw new Error('prepare-worker.ts runs as a worker thread (see prepare-thread.ts)');

const sources = new Map<string, DocumentSource>();
/** Preparers by docs file, then by definition JSON. */
const preparers = new Map<string, Map<string, BatchPreparer>>();

port.on('message', (raw: unknown) => {
  const message = ToPrepareThreadSchema.parse(raw);
  if (message.type === 'forget') {
    const ofDatabase = preparers.get(message.docsFile);
    for (const [definition, preparer] of ofDatabase ?? []) {
      if (message.definition !== null && definition !== message.definition) continue;
      preparer.dispose();
      ofDatabase?.delete(definition);
    }
    if (message.definition === null) {
      preparers.delete(message.docsFile);
      sources.get(message.docsFile)?.close();
      sources.delete(message.docsFile);
    }
    return;
  }
  let answer: FromPrepareThread;
  let transfer: ArrayBuffer[] = [];
  try {
    let source = sources.get(message.docsFile);
    if (!source) {
      source = new DocumentSource(message.docsFile);
      sources.set(message.docsFile, source);
    }
    let ofDatabase = preparers.get(message.docsFile);
    if (!ofDatabase) {
      ofDatabase = new Map();
      preparers.set(message.docsFile, ofDatabase);
    }
    let preparer = ofDatabase.get(message.definition);
    if (!preparer) {
      preparer = new BatchPreparer(JSON.parse(message.definition) as IndexDefinition, message.sandbox);
      ofDatabase.set(message.definition, preparer);
    }
    const batch = source.readBatch(preparer.collections, message.afterEtag, message.limit, {
      includeArchived: message.includeArchived,
    });
    const prepared = preparer.prepare(batch);
    // A batch cut at its time budget ends before the one read did.
    const more = prepared.upToEtag < source.lastEtag();
    if (prepared.entries) transfer = EntryRowsBuilder.transferables(prepared.entries);
    answer = { id: message.id, ok: true, batch: prepared, more };
  } catch (error) {
    answer = {
      id: message.id,
      ok: false,
      error: (error as Error).message,
      sandbox: error instanceof SandboxError,
    };
  }
  port.postMessage(answer, transfer);
});
