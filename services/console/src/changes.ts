// The changes feed (GET /databases/{db}/changes, a WebSocket) through the gateway on the page's own origin:
// the browser sends the session cookie and the client certificate with the upgrade, and the gateway
// refuses upgrades other sites' pages open. Each notification is parsed before a page sees it.
import { useEffect, useRef } from 'react';
import { z } from 'zod';
import { databasePath } from './api.js';

const IndexChangeSchema = z.object({
  Type: z.literal('IndexChange'),
  Value: z.looseObject({
    Name: z.string(),
    Type: z.enum(['BatchCompleted', 'IndexAdded', 'IndexRemoved']),
    Etag: z.number(),
  }),
});
export type IndexChange = z.infer<typeof IndexChangeSchema>['Value'];

export type FeedState = 'connecting' | 'live' | 'closed';

/**
 * Watches every index of `database` while the component is shown: `onChange` for each IndexChange,
 * `onState` when the feed is confirmed (only then is the watch in effect) or closes. It is not
 * reopened by itself: a page that sees 'closed' says so, and reloading it opens a new one.
 */
export function useIndexChanges(
  database: string,
  onChange: (change: IndexChange) => void,
  onState: (state: FeedState) => void,
): void {
  // The latest callbacks without reopening the socket on every render.
  const handlers = useRef({ onChange, onState });
  handlers.current = { onChange, onState };

  useEffect(() => {
    const url = new URL(databasePath(database, 'changes'), window.location.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const socket = new WebSocket(url);
    handlers.current.onState('connecting');
    socket.onopen = () => socket.send(JSON.stringify({ Command: 'watch-all-indexes', CommandId: 1 }));
    socket.onmessage = (event: MessageEvent) => {
      const message = parse(event.data);
      if (message === null) return;
      if (message.Type === 'Confirm' && message.CommandId === 1) handlers.current.onState('live');
      const change = IndexChangeSchema.safeParse(message);
      if (change.success) handlers.current.onChange(change.data.Value);
    };
    socket.onclose = () => handlers.current.onState('closed');
    return () => {
      socket.onclose = null;
      socket.close();
    };
  }, [database]);
}

function parse(data: unknown): { Type?: unknown; CommandId?: unknown } | null {
  if (typeof data !== 'string') return null;
  try {
    const value: unknown = JSON.parse(data);
    return typeof value === 'object' && value !== null ? value : null;
  } catch {
    return null;
  }
}
