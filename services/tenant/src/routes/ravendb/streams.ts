import type { StreamEndLine } from '@rookery/protocol';

/**
 * How a stream frames its results (live/streams.ts). Rookery's NDJSON: one result per line, then an `@end`
 * line, or an `@error` line if it fails after its headers left. RavenDB's JSON Lines (`?format=jsonl`, which
 * its clients always ask for): see ravenStreamFraming.
 */
export interface StreamFraming {
  /** The line before the results, or null. */
  head: string | null;
  /** A result's line, from its JSON text; null: the text as it is (no copy of the page). */
  item: ((json: string) => string) | null;
  /** The last line once every result went out, or null for none. */
  end(count: number): StreamEndLine | null;
  /**
   * How a failure after the headers is told: an `@error` line, or cutting the connection for a reader that
   * would take any line for a result (it then reports the stream as broken rather than complete).
   */
  failure: 'error-line' | 'cut';
}

/** What RavenDB's clients read as a streamed query's statistics (StreamQueryStatistics). */
export interface RavenStreamStats {
  IndexName: string | null;
  IsStale: boolean;
  TotalResults: number;
  IndexTimestamp: string;
}

/**
 * RavenDB's JSON Lines, as its Node client parses them (StreamOperation, Pipelines.getDocumentResultsAsObjects):
 * a query stream is a `{"Stats": …}` line, then one `{"Item": …}` line per result; a document stream
 * (`streams/docs`) is one document per line. Neither ends with a line of its own, so a failure after the
 * headers cuts the connection: the client's reader then fails instead of taking a partial stream as whole.
 */
export function ravenStreamFraming(stats: RavenStreamStats | null): StreamFraming {
  return {
    head: stats === null ? null : JSON.stringify({ Stats: stats }),
    item: stats === null ? null : (json) => `{"Item":${json}}`,
    end: () => null,
    failure: 'cut',
  };
}
