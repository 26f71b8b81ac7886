// The database's subscriptions (the tenant's GET/PUT/DELETE …/subscriptions): each with its query, whether a
// consumer is connected and its progress — everything up to LastAcknowledgedEtag was acknowledged (or
// scanned past), drawn against the database's last document etag (…/stats LastDocEtag). Create with a
// name and a query; delete after a confirmation. Read again on demand (Refresh): progress moves as
// consumers acknowledge, which the tenant announces on no feed the console reads.
import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { z } from 'zod';
import { call, databasePath, describeError, NothingSchema } from '../api.js';

const SubscriptionSchema = z.looseObject({
  Name: z.string(),
  Query: z.string(),
  LastAcknowledgedEtag: z.number(),
  LastAcknowledgedAt: z.string().nullable(),
  Connected: z.boolean(),
});
type Subscription = z.infer<typeof SubscriptionSchema>;
const SubscriptionsSchema = z.looseObject({ Results: z.array(SubscriptionSchema) });
const LastEtagSchema = z.looseObject({ LastDocEtag: z.number() });

export function Subscriptions({ database, canWrite }: { database: string; canWrite: boolean }) {
  const [subscriptions, setSubscriptions] = useState<Subscription[] | null>(null);
  const [lastEtag, setLastEtag] = useState(0);
  const [name, setName] = useState('');
  const [query, setQuery] = useState('from Orders');
  const [confirming, setConfirming] = useState<string | null>(null);
  const [failure, setFailure] = useState('');

  const reload = useCallback(async () => {
    const [listed, stats] = await Promise.all([
      call('GET', databasePath(database, 'subscriptions'), SubscriptionsSchema),
      call('GET', databasePath(database, 'stats'), LastEtagSchema),
    ]);
    setSubscriptions(listed.body.Results);
    setLastEtag(stats.body.LastDocEtag);
  }, [database]);

  async function act(action: () => Promise<void>) {
    setFailure('');
    try {
      await action();
    } catch (error) {
      setFailure(describeError(error));
    }
  }

  useEffect(() => {
    reload().catch((error: unknown) => setFailure(describeError(error)));
  }, [reload]);

  const create = (event: FormEvent) => {
    event.preventDefault();
    void act(async () => {
      await call('PUT', databasePath(database, 'subscriptions'), NothingSchema, {
        body: { Name: name, Query: query },
      });
      setName('');
      await reload();
    });
  };

  const remove = (subscription: string) =>
    act(async () => {
      await call(
        'DELETE',
        databasePath(database, `subscriptions/${encodeURIComponent(subscription)}`),
        NothingSchema,
      );
      setConfirming(null);
      await reload();
    });

  return (
    <div className="subscriptions">
      <h1>Subscriptions of {database}</h1>
      {failure && (
        <p role="alert" className="error">
          {failure}
        </p>
      )}
      {canWrite && (
        <form onSubmit={create} className="subscription-form">
          <label htmlFor="subscription-name">Name</label>
          <input
            id="subscription-name"
            required
            value={name}
            onChange={(event) => setName(event.target.value)}
          />
          <label htmlFor="subscription-query">Query (from Collection [where …])</label>
          <input
            id="subscription-query"
            required
            value={query}
            onChange={(event) => setQuery(event.target.value)}
          />
          <button type="submit">Create subscription</button>
        </form>
      )}
      <p>
        <button type="button" onClick={() => void act(reload)}>
          Refresh
        </button>
      </p>
      {subscriptions?.length === 0 && <p>No subscriptions in {database}.</p>}
      {subscriptions !== null && subscriptions.length > 0 && (
        <div className="table-scroll">
          <table>
            <caption>Subscriptions and their progress (last document etag {lastEtag})</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Query</th>
                <th scope="col">Consumer</th>
                <th scope="col">Progress</th>
                {canWrite && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {subscriptions.map((subscription) => (
                <tr key={subscription.Name} data-subscription={subscription.Name}>
                  <th scope="row">{subscription.Name}</th>
                  <td>
                    <code>{subscription.Query}</code>
                  </td>
                  <td>{subscription.Connected ? 'connected' : 'none connected'}</td>
                  <td>
                    <progress
                      aria-label={`Progress of ${subscription.Name}`}
                      value={Math.min(subscription.LastAcknowledgedEtag, lastEtag)}
                      max={Math.max(lastEtag, 1)}
                    />{' '}
                    <span data-testid="acknowledged">
                      up to etag {subscription.LastAcknowledgedEtag} of {lastEtag}
                      {subscription.LastAcknowledgedAt
                        ? `, last acknowledged ${subscription.LastAcknowledgedAt}`
                        : ', nothing acknowledged yet'}
                    </span>
                  </td>
                  {canWrite && (
                    <td>
                      {confirming === subscription.Name ? (
                        <>
                          <button
                            type="button"
                            className="danger"
                            onClick={() => void remove(subscription.Name)}
                          >
                            Delete {subscription.Name} for good
                          </button>
                          <button type="button" onClick={() => setConfirming(null)}>
                            Cancel
                          </button>
                        </>
                      ) : (
                        <button
                          type="button"
                          aria-label={`Delete ${subscription.Name}`}
                          onClick={() => setConfirming(subscription.Name)}
                        >
                          Delete
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
