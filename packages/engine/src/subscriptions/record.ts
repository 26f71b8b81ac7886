import { type QueryParameters, QueryParametersSchema } from '@rookery/protocol';
import type { SubscriptionRow } from '../storage/statements.js';

/** A subscription as docs.db stores it. */
export interface SubscriptionRecord {
  name: string;
  /** The query text as given (`from Collection [where …]`), compiled again by each connection. */
  query: string;
  /** The values of the query's `$name` references (`{}` when it has none), compiled in with it. */
  parameters: QueryParameters;
  /** Everything up to this etag was acknowledged by a consumer, or scanned past without a match. */
  lastEtag: number;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms of the last acknowledged batch; null before the first one. */
  lastAcknowledgedAt: number | null;
}

export interface NewSubscription {
  name: string;
  query: string;
  /** The values of the query's `$name` references; none by default. */
  parameters?: QueryParameters;
  /** `Beginning`: every document there is; `Now`: only documents written after the subscription. */
  startFrom: 'Beginning' | 'Now';
}

/** The `parameters` column: JSON, or null for none (what every subscription schema 3 wrote has). */
export function storedParameters(parameters: QueryParameters): string | null {
  return Object.keys(parameters).length === 0 ? null : JSON.stringify(parameters);
}

export function subscriptionRecordOf(row: SubscriptionRow): SubscriptionRecord {
  return {
    name: row.name,
    query: row.query,
    // Checked as it is read, like any input: the file may come from a restore or another build.
    parameters: row.parameters === null ? {} : QueryParametersSchema.parse(JSON.parse(row.parameters)),
    lastEtag: row.last_etag,
    createdAt: row.created_at,
    lastAcknowledgedAt: row.last_ack_at,
  };
}
