import type { SubscriptionRow } from '../storage/statements.js';

/** A subscription as docs.db stores it. */
export interface SubscriptionRecord {
  name: string;
  /** The query text as given (`from Collection [where …]`), compiled again by each connection. */
  query: string;
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
  /** `Beginning`: every document there is; `Now`: only documents written after the subscription. */
  startFrom: 'Beginning' | 'Now';
}

export function subscriptionRecordOf(row: SubscriptionRow): SubscriptionRecord {
  return {
    name: row.name,
    query: row.query,
    lastEtag: row.last_etag,
    createdAt: row.created_at,
    lastAcknowledgedAt: row.last_ack_at,
  };
}
