// Who is calling the control API. The API never authenticates anyone: whoever
// hosts it (the gateway, after the TLS handshake, the revocation check and the
// two-factor session) hands over the principal together with the raw request,
// and the routes read it back from here. Deliberately not a header: a header
// can be sent by any client, an entry in this map only by code holding it.
import type { IncomingMessage } from 'node:http';
import type { Principal } from '@rookery/control-store';
import { RookeryError } from '@rookery/protocol';

export interface ControlCaller {
  /** The authenticated principal the request acts as. */
  principal: Principal;
  /** The host's id of the request, so the API's log lines match the gateway's. */
  requestId: string;
}

const callers = new WeakMap<IncomingMessage, ControlCaller>();

export function bindCaller(request: IncomingMessage, caller: ControlCaller): void {
  callers.set(request, caller);
}

/** The caller bound to a request, if any (for log lines and request ids). */
export function boundCaller(request: IncomingMessage): ControlCaller | undefined {
  return callers.get(request);
}

/** The caller of a request; a request that reached the API without one is refused, never served anonymously. */
export function callerOf(request: IncomingMessage): Principal {
  const caller = callers.get(request);
  if (!caller) {
    throw new RookeryError('CertificateRequired', 'Present a client certificate issued by Rookery.');
  }
  return caller.principal;
}
