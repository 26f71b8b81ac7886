import type { Database, DocumentChange } from '@rookery/engine';
import {
  type ChangesCommand,
  ChangesCommandSchema,
  type ChangesServerMessage,
  LiveCloseCodes,
  RookeryError,
} from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import type WebSocket from 'ws';
import { DatabaseParams, databaseOf, type RouteContext } from '../routes/context.js';
import { ChangeWatches, MAX_WATCHES_PER_CONNECTION } from './change-watches.js';
import type { IndexChangeFeed } from './index-change-feed.js';
import type { LiveGauges } from './live-gauges.js';
import { LiveSocket } from './live-socket.js';

export interface ChangesOptions {
  indexChanges: IndexChangeFeed;
  pingIntervalMs: number;
  gauges: LiveGauges;
}

/**
 * `GET /databases/{db}/changes` (WebSocket): the changes feed of docs/live-data.md. Must be declared in a
 * plugin registered after @fastify/websocket, whose onRoute hook turns it into a WebSocket route.
 */
export function changesRoutes(app: FastifyInstance, context: RouteContext, options: ChangesOptions): void {
  app.route({
    method: 'GET',
    url: '/databases/:db/changes',
    // The commands are WebSocket messages (protocol's ChangesCommandSchema, docs/live-data.md), not a request part.
    schema: { summary: 'The changes feed (WebSocket)', params: DatabaseParams },
    // Runs before the upgrade: a database that does not exist is a plain HTTP 404 problem, not a socket
    // that opens and closes at once.
    preValidation: async (request) => {
      databaseOf(context, request);
    },
    handler: async () => {
      throw new RookeryError(
        'InvalidRequest',
        'The changes feed is a WebSocket: connect with "Connection: Upgrade" and "Upgrade: websocket"',
      );
    },
    wsHandler: (socket, request) => serveChanges(socket, databaseOf(context, request), options),
  });
}

function serveChanges(socket: WebSocket, db: Database, options: ChangesOptions): void {
  const live = new LiveSocket(socket, { pingIntervalMs: options.pingIntervalMs });
  const watches = new ChangeWatches();
  const send = (message: ChangesServerMessage) => live.send(message);

  // Commit listeners run after the transaction committed, so a notification never announces a write
  // that could still roll back.
  const stopCommits = db.onCommit((changes) => {
    for (const change of changes) if (watches.matchesDocument(change)) send(documentChange(change));
  });
  const stopIndexes = options.indexChanges.subscribe(db.name, (change) => {
    if (watches.matchesIndex(change.Name)) send({ Type: 'IndexChange', Value: change });
  });
  const stopOnClose = db.onClose(() =>
    live.close(LiveCloseCodes.DatabaseUnavailable, `database ${db.name} was deleted or is closing`),
  );
  options.gauges.changesConnections++;
  socket.once('close', () => {
    stopCommits();
    stopIndexes();
    stopOnClose();
    options.gauges.changesConnections--;
  });

  socket.on('message', (data, isBinary) => {
    const parsed = parseCommand(data, isBinary);
    if ('error' in parsed) {
      const { error, commandId } = parsed;
      send({
        Type: 'Error',
        Code: error.code,
        Message: error.message,
        Exception: error.message,
        ...(commandId === undefined ? {} : { CommandId: commandId }),
      });
      return;
    }
    const { command } = parsed;
    if (!watches.apply(command)) {
      const message = `A changes connection holds at most ${MAX_WATCHES_PER_CONNECTION} watches; unwatch some, or watch a prefix or a collection`;
      send({
        Type: 'Error',
        Code: 'InvalidRequest',
        Message: message,
        Exception: message,
        CommandId: command.CommandId,
      });
      return;
    }
    send({ Type: 'Confirm', CommandId: command.CommandId });
  });
}

type ParsedCommand = { command: ChangesCommand } | { error: RookeryError; commandId?: number };

/**
 * A frame as a command, or what is wrong with it (answered with an Error frame; the connection stays open).
 * The CommandId of a command that does not parse is echoed when it can be read, so the client can tell
 * which of its commands failed.
 */
function parseCommand(data: WebSocket.RawData, isBinary: boolean): ParsedCommand {
  if (isBinary)
    return { error: new RookeryError('InvalidRequest', 'Commands are JSON text frames, not binary ones') };
  let json: unknown;
  try {
    json = JSON.parse(textOf(data));
  } catch (error) {
    return {
      error: new RookeryError('InvalidJson', `The command is not JSON (${(error as Error).message})`),
    };
  }
  const parsed = ChangesCommandSchema.safeParse(json);
  if (parsed.success) return { command: parsed.data };
  const issues = parsed.error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  const commandId = (json as { CommandId?: unknown } | null)?.CommandId;
  return {
    error: new RookeryError(
      'InvalidRequest',
      `The command is not valid: ${issues.join('; ')}. A command looks like {"Command":"watch-collection","Param":"Users","CommandId":1}`,
    ),
    ...(typeof commandId === 'number' && Number.isInteger(commandId) ? { commandId } : {}),
  };
}

function textOf(data: WebSocket.RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

function documentChange(change: DocumentChange): ChangesServerMessage {
  return {
    Type: 'DocumentChange',
    Value: {
      Id: change.id,
      Collection: change.collection,
      CollectionName: change.collection,
      ChangeVector: change.changeVector,
      Type: change.type === 'put' ? 'Put' : 'Delete',
      Etag: change.etag,
    },
  };
}
