// The host's word that a worker's build completed is what makes a quiet indexer adopt it without
// waiting for a write (indexer-main.ts polls a quiet database with one pragma, which no build changes).
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { WorkerBuilds } from './worker-builds.js';

const DEFINITION = { Name: 'Notes/ByWord', Maps: [{ Collection: 'Notes', Fields: { Word: 'Word' } }] };

function progress(build: string, state: 'active' | 'completed' | 'failed') {
  return {
    type: 'index-build-progress' as const,
    database: 'Shop',
    index: 'notes/byword',
    build,
    state,
    phase: null,
    documents: 10,
    final: state !== 'active',
  };
}

describe('worker builds as the tenant sees them', () => {
  it('tells the indexer the database whose awaited build completed, and only that', () => {
    const landed: string[] = [];
    const builds = new WorkerBuilds(
      () => undefined,
      pino({ level: 'silent' }),
      (db) => landed.push(db),
    );
    builds.onIndexer({ type: 'build-request', db: 'shop', definition: DEFINITION, build: 'b1' });
    builds.onHost(progress('b1', 'active'));
    builds.onHost(progress('b0', 'completed')); // an older build of the index: old news
    expect(landed).toEqual([]);
    builds.onHost(progress('b1', 'completed'));
    expect(landed).toEqual(['Shop']);
  });
});
