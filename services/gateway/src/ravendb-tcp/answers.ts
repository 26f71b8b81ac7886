// How Rookery's answers read in RavenDB's TCP protocol: a refusal of the gateway or the tenant, and the
// close codes of Rookery's subscription WebSocket (docs/live-data.md), become the ConnectionStatus or Error
// message whose type the client's worker turns into the exception it acts on: it stops on NotFound
// (SubscriptionDoesNotExistException), InUse, Invalid (SubscriptionInvalidStateException), a database that
// does not exist, and a Closed that cannot reconnect; on an Error message it waits and reconnects.
import { LiveCloseCodes, type RavenSubscriptionServerMessage } from '@rookery/protocol';

/** The client matches this name in an Error's Exception (AbstractSubscriptionWorker._assertConnectionState). */
const DATABASE_DOES_NOT_EXIST = 'Raven.Client.Exceptions.Database.DatabaseDoesNotExistException';

/** What to tell the worker for a refusal with Rookery's error `code` (the gateway's or the tenant's). */
export function ravenAnswerFor(code: string, message: string): RavenSubscriptionServerMessage {
  const text = `${code}: ${message}`;
  switch (code) {
    case 'DatabaseNotFound':
      return { Type: 'Error', Message: text, Exception: `${DATABASE_DOES_NOT_EXIST}: ${text}` };
    case 'SubscriptionNotFound':
      return { Type: 'ConnectionStatus', Status: 'NotFound', Message: text, Exception: text };
    case 'SubscriptionInUse':
      return { Type: 'ConnectionStatus', Status: 'InUse', Message: text, Exception: text };
    case 'SubscriptionTakenOver':
      // RavenDB's TakeOver closes the old worker for good, as Rookery's 4410 does.
      return {
        Type: 'ConnectionStatus',
        Status: 'Closed',
        Message: text,
        Exception: text,
        Data: { CanReconnect: false },
      };
    // What no retry changes: the caller may not reach it, or asked for what Rookery does not do.
    case 'Forbidden':
    case 'TenantRequired':
    case 'InvalidRequest':
    case 'TwoFactorRequired':
      return { Type: 'ConnectionStatus', Status: 'Invalid', Message: text, Exception: text };
    default:
      // Passing (a tenant waking or restarting, a rate or connection limit): the worker reconnects after
      // its TimeToWaitBeforeConnectionRetry.
      return { Type: 'Error', Message: text, Exception: `Rookery.${text}` };
  }
}

/** What a close of the tenant's subscription WebSocket tells the worker; null for a plain close. */
export function ravenAnswerForClose(
  closeCode: number,
  lastError: { Code: string; Message: string } | null,
): RavenSubscriptionServerMessage | null {
  const said = lastError?.Message;
  switch (closeCode) {
    case LiveCloseCodes.SubscriptionNotFound:
      return ravenAnswerFor('SubscriptionNotFound', said ?? 'the subscription was deleted');
    case LiveCloseCodes.SubscriptionInUse:
      return ravenAnswerFor('SubscriptionInUse', said ?? 'another consumer holds the subscription');
    case LiveCloseCodes.SubscriptionTakenOver:
      return ravenAnswerFor('SubscriptionTakenOver', said ?? 'another worker took the subscription over');
    case 1000:
      return null;
    default:
      return ravenAnswerFor(
        lastError?.Code ?? 'TenantUnavailable',
        said ?? `the tenant closed the subscription (WebSocket close ${closeCode}); the worker reconnects`,
      );
  }
}
