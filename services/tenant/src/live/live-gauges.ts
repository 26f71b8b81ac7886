/** The live consumers a tenant serves now: what tests check is released, and what stats could report. */
export interface LiveGauges {
  /** Open changes WebSockets. */
  changesConnections: number;
  /** NDJSON streams being written. */
  streams: number;
  /** Bytes written to NDJSON streams since the server started. */
  streamBytes: number;
}
