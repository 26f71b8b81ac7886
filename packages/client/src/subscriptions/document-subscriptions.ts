// `store.subscriptions`: create, list and delete subscriptions over HTTP, and open workers that consume
// them over a WebSocket (subscription-worker.ts).
import type { QueryParameters, SubscriptionState } from '@rookery/protocol';
import { z } from 'zod';
import type { RequestExecutor } from '../http/request-executor.js';
import { parseResponse, SubscriptionStateSchema } from '../http/responses.js';
import type { LiveSocketOptions } from '../live/live-socket.js';
import { SubscriptionWorker, type SubscriptionWorkerOptions } from './subscription-worker.js';

/** A subscription's state, its query's parameters included (checked with the schema the server takes them with). */

export interface SubscriptionCreation {
  name: string;
  /** `from Collection [where …]`: documents are read in etag order and filtered (no index). */
  query: string;
  /** The values of the query's `$name` references, as a query takes them; kept with the subscription. */
  parameters?: QueryParameters;
  /** Every existing matching document (default), or only those changed from now on. */
  startFrom?: 'Beginning' | 'Now';
}

export interface SubscriptionsContext {
  executor: RequestExecutor;
  databasePath: string;
  socketOptions(path: string): LiveSocketOptions;
  reconnect: { minDelayMs: number; maxDelayMs: number };
}

export class DocumentSubscriptions {
  private readonly workers = new Set<{ close(): Promise<void> }>();

  constructor(private readonly context: SubscriptionsContext) {}

  /**
   * Creates a subscription; SubscriptionAlreadyExists if the name is taken, InvalidQuery if the query uses a
   * `$name` that `parameters` lacks. Returns its name.
   */
  async create(creation: SubscriptionCreation): Promise<string> {
    await this.context.executor.execute({
      method: 'PUT',
      path: `${this.context.databasePath}/subscriptions`,
      body: JSON.stringify({
        Name: creation.name,
        Query: creation.query,
        ...(creation.parameters === undefined ? {} : { QueryParameters: creation.parameters }),
        ...(creation.startFrom === undefined ? {} : { StartFrom: creation.startFrom }),
      }),
      // A PUT that already succeeded answers 409 when sent again: not a request to repeat blindly.
      idempotent: false,
    });
    return creation.name;
  }

  async getSubscriptions(): Promise<SubscriptionState[]> {
    const { value } = await this.context.executor.json<unknown>({
      method: 'GET',
      path: `${this.context.databasePath}/subscriptions`,
    });
    // The list comes as an array, or wrapped as { Results: [...] } like the other list answers.
    const list = Array.isArray(value) ? value : (value as { Results?: unknown } | null)?.Results;
    return parseResponse(z.array(SubscriptionStateSchema), list, 'subscription list') as SubscriptionState[];
  }

  async getSubscription(name: string): Promise<SubscriptionState> {
    const { value } = await this.context.executor.json<unknown>({
      method: 'GET',
      path: `${this.context.databasePath}/subscriptions/${encodeURIComponent(name)}`,
    });
    return parseResponse(SubscriptionStateSchema, value, 'subscription') as SubscriptionState;
  }

  async delete(name: string): Promise<void> {
    await this.context.executor.execute({
      method: 'DELETE',
      path: `${this.context.databasePath}/subscriptions/${encodeURIComponent(name)}`,
    });
  }

  /** A consumer: `for await (const batch of worker) { … }`; see SubscriptionWorker. */
  getSubscriptionWorker<T = Record<string, unknown>>(
    name: string,
    options: SubscriptionWorkerOptions = {},
  ): SubscriptionWorker<T> {
    const query = new URLSearchParams();
    if (options.strategy !== undefined) query.set('strategy', options.strategy);
    if (options.batchSize !== undefined) query.set('batchSize', String(options.batchSize));
    if (options.maxWaitMs !== undefined) query.set('maxWaitMs', String(options.maxWaitMs));
    const suffix = query.size > 0 ? `?${query}` : '';
    const path = `${this.context.databasePath}/subscriptions/${encodeURIComponent(name)}/connect${suffix}`;
    const worker: SubscriptionWorker<T> = new SubscriptionWorker<T>(
      name,
      () => this.context.socketOptions(path),
      options,
      this.context.reconnect,
      () => this.workers.delete(worker),
    );
    this.workers.add(worker);
    return worker;
  }

  /** @internal The store is closing: so do its workers (their batches in hand stay unacknowledged). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.workers].map((worker) => worker.close()));
  }
}
