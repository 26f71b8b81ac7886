// The changes feed of one database (`GET /databases/{db}/changes`, a WebSocket): watches are shared and
// reference-counted, each is in effect once the server confirmed it, notifications are dispatched to every
// observable whose filter matches. A dropped connection (closed, or silent for more than two ping
// intervals) is reported as 'connectionStatus' and 'error' events and reopened with backoff, sending the
// active watches again; changes made while it was down are not replayed (aggressive caching drops its
// cache for that reason).
import { type ChangesCommand, LiveCloseCodes } from '@rookery/protocol';
import type WebSocket from 'ws';
import { clientError, errorForCode, type RookeryClientError } from '../errors.js';
import { ChangesObservable } from './changes-observable.js';
import { ChangesFrameSchema, type DocumentChange, type IndexChange, parseFrame } from './frames.js';
import { Listeners } from './listeners.js';
import {
  Backoff,
  isTransientRefusal,
  type LiveSocketOptions,
  openLiveSocket,
  watchLiveness,
} from './live-socket.js';

type WatchCommand = Extract<ChangesCommand['Command'], `watch-${string}`>;

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Nobody may be waiting for it: a rejection must not become an unhandled one.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

interface Watch {
  command: WatchCommand;
  param: string | undefined;
  users: number;
  /** Resolved when the server confirmed this watch on the current connection. */
  confirmed: Deferred;
  isConfirmed: boolean;
}

export interface ConnectionStatus {
  connected: boolean;
  error?: RookeryClientError;
}

export interface ChangesEvents extends Record<string, unknown> {
  connectionStatus: ConnectionStatus;
  error: RookeryClientError;
}

export interface DatabaseChangesOptions {
  socket: () => LiveSocketOptions;
  reconnectMinDelayMs: number;
  reconnectMaxDelayMs: number;
  onClose?: () => void;
}

export class DatabaseChanges {
  private readonly watches = new Map<string, Watch>();
  private readonly observables = new Set<ChangesObservable<DocumentChange | IndexChange>>();
  private readonly listeners = new Listeners<ChangesEvents>();
  private readonly backoff: Backoff;
  /** Confirms awaited on the current connection, by command id. */
  private readonly pendingConfirms = new Map<number, Watch>();
  private socket: WebSocket | null = null;
  private connecting = false;
  private nextCommandId = 1;
  private closed = false;
  /** A refusal that retrying will not fix (a revoked certificate, an unknown database): everything fails. */
  private failure: RookeryClientError | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private stopWatching: (() => void) | null = null;

  constructor(private readonly options: DatabaseChangesOptions) {
    this.backoff = new Backoff(options.reconnectMinDelayMs, options.reconnectMaxDelayMs);
  }

  get connected(): boolean {
    return this.socket !== null;
  }

  on<K extends keyof ChangesEvents>(event: K, listener: (value: ChangesEvents[K]) => void): () => void {
    return this.listeners.on(event, listener);
  }

  forDocument(id: string): ChangesObservable<DocumentChange> {
    const key = id.toLowerCase();
    return this.observe('watch-doc', id, (c) => isDocument(c) && c.Id.toLowerCase() === key);
  }
  forDocumentsInCollection(collection: string): ChangesObservable<DocumentChange> {
    const key = collection.toLowerCase();
    return this.observe(
      'watch-collection',
      collection,
      (c) => isDocument(c) && c.Collection?.toLowerCase() === key,
    );
  }
  forDocumentsStartingWith(prefix: string): ChangesObservable<DocumentChange> {
    const key = prefix.toLowerCase();
    return this.observe('watch-prefix', prefix, (c) => isDocument(c) && c.Id.toLowerCase().startsWith(key));
  }
  forIndex(name: string): ChangesObservable<IndexChange> {
    const key = name.toLowerCase();
    return this.observe('watch-index', name, (c) => !isDocument(c) && c.Name.toLowerCase() === key);
  }
  forAllDocuments(): ChangesObservable<DocumentChange> {
    return this.observe('watch-all-docs', undefined, isDocument);
  }
  forAllIndexes(): ChangesObservable<IndexChange> {
    return this.observe('watch-all-indexes', undefined, (c) => !isDocument(c));
  }

  /** Resolves once connected (opening the connection if no watch did yet). */
  async ensureConnectedNow(): Promise<void> {
    const status = deferred();
    const stop = this.on('connectionStatus', (s) => {
      if (s.connected) status.resolve();
    });
    const stopError = this.on('error', (e) => {
      if (this.failure !== null) status.reject(e);
    });
    try {
      if (this.failure !== null) throw this.failure;
      if (this.socket !== null) return;
      this.connect();
      await status.promise;
    } finally {
      stop();
      stopError();
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.reconnectTimer !== null) clearTimeout(this.reconnectTimer);
    const error = clientError('ClientClosed', 'The changes connection was closed');
    for (const watch of this.watches.values()) watch.confirmed.reject(error);
    for (const observable of [...this.observables]) observable.terminate(null);
    this.socket?.close(1000);
    this.socket = null;
    this.options.onClose?.();
  }

  /** @internal Confirmation of one watch on the current connection (used by observables). */
  confirmation(watchKey: string): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(clientError('ClientClosed', 'The changes connection is closed'));
    const watch = this.watches.get(watchKey);
    if (watch === undefined) return Promise.resolve();
    return watch.confirmed.promise;
  }

  /** @internal Whether a watch is confirmed on the current connection. */
  isConfirmed(watchKey: string): boolean {
    return this.socket !== null && this.watches.get(watchKey)?.isConfirmed === true;
  }

  /** @internal An observable closed: its watch is dropped when nobody else uses it. */
  release(watchKey: string, observable: ChangesObservable<DocumentChange | IndexChange>): void {
    this.observables.delete(observable);
    const watch = this.watches.get(watchKey);
    if (watch === undefined) return;
    watch.users -= 1;
    if (watch.users > 0) return;
    this.watches.delete(watchKey);
    const unwatch = watch.command.replace('watch-', 'unwatch-') as ChangesCommand['Command'];
    this.send(unwatch, watch.param);
  }

  private observe<T extends DocumentChange | IndexChange>(
    command: WatchCommand,
    param: string | undefined,
    filter: (change: DocumentChange | IndexChange) => boolean,
  ): ChangesObservable<T> {
    if (this.closed) throw clientError('ClientClosed', 'The changes connection is closed');
    const key = param === undefined ? command : `${command}\n${param.toLowerCase()}`;
    let watch = this.watches.get(key);
    if (watch === undefined) {
      watch = { command, param, users: 0, confirmed: deferred(), isConfirmed: false };
      this.watches.set(key, watch);
      if (this.socket !== null) this.sendWatch(watch);
      else this.connect();
    }
    watch.users += 1;
    const observable = new ChangesObservable<T>(this, key, filter);
    this.observables.add(observable as ChangesObservable<DocumentChange | IndexChange>);
    if (this.failure !== null) observable.terminate(this.failure);
    return observable;
  }

  private connect(): void {
    if (this.closed || this.connecting || this.socket !== null || this.failure !== null) return;
    this.connecting = true;
    void openLiveSocket(this.options.socket(), {
      open: (socket) => {
        this.connecting = false;
        if (this.closed) socket.close(1000);
        else this.attach(socket);
      },
      message: (socket, data) => {
        if (this.socket === socket) this.receive(data);
      },
      close: (socket, code) => this.socketClosed(socket, code),
    }).then((outcome) => {
      this.connecting = false;
      if (outcome.ok || this.closed) return;
      if (isTransientRefusal(outcome.error)) this.disconnected(outcome.error);
      else this.fail(outcome.error);
    });
  }

  private attach(socket: WebSocket): void {
    this.socket = socket;
    this.stopWatching = watchLiveness(socket);
    this.backoff.reset();
    this.listeners.emit('connectionStatus', { connected: true });
    for (const watch of this.watches.values()) this.sendWatch(watch);
  }

  private socketClosed(socket: WebSocket, code: number): void {
    if (this.socket !== socket) return;
    this.stopWatching?.();
    this.socket = null;
    if (this.closed) return;
    this.disconnected(
      code === LiveCloseCodes.DatabaseUnavailable
        ? errorForCode({
            code: 'DatabaseUnavailable',
            status: null,
            detail: `The database is unavailable (closed ${code}); reconnecting`,
          })
        : clientError('ConnectionFailed', `The changes connection closed (${code}); reconnecting`),
    );
  }

  private disconnected(error: RookeryClientError): void {
    this.pendingConfirms.clear();
    for (const watch of this.watches.values()) {
      if (watch.isConfirmed) {
        watch.isConfirmed = false;
        watch.confirmed = deferred();
      }
    }
    this.listeners.emit('connectionStatus', { connected: false, error });
    this.listeners.emit('error', error);
    for (const observable of this.observables) observable.reportError(error);
    const delay = this.backoff.next();
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connect();
    }, delay);
    this.reconnectTimer.unref();
  }

  private fail(error: RookeryClientError): void {
    this.failure = error;
    for (const watch of this.watches.values()) watch.confirmed.reject(error);
    this.listeners.emit('connectionStatus', { connected: false, error });
    this.listeners.emit('error', error);
    for (const observable of [...this.observables]) observable.terminate(error);
  }

  private sendWatch(watch: Watch): void {
    const commandId = this.send(watch.command, watch.param);
    if (commandId !== null) this.pendingConfirms.set(commandId, watch);
  }

  private send(command: ChangesCommand['Command'], param: string | undefined): number | null {
    const socket = this.socket;
    if (socket === null) return null;
    const commandId = this.nextCommandId++;
    socket.send(
      JSON.stringify(
        param === undefined
          ? { Command: command, CommandId: commandId }
          : { Command: command, Param: param, CommandId: commandId },
      ),
    );
    return commandId;
  }

  private receive(data: unknown): void {
    const parsed = parseFrame(ChangesFrameSchema, data);
    if (!parsed.ok) {
      this.listeners.emit(
        'error',
        clientError('UnexpectedResponse', `The changes connection sent ${parsed.reason}`),
      );
      return;
    }
    const frame = parsed.frame;
    switch (frame.Type) {
      case 'Confirm': {
        const watch = this.pendingConfirms.get(frame.CommandId);
        if (watch === undefined) return;
        this.pendingConfirms.delete(frame.CommandId);
        watch.isConfirmed = true;
        watch.confirmed.resolve();
        return;
      }
      case 'DocumentChange':
      case 'IndexChange':
        for (const observable of this.observables) observable.offer(frame.Value);
        return;
      case 'Error': {
        const error = errorForCode({ code: frame.Code, status: null, detail: frame.Message });
        const watch = frame.CommandId === undefined ? undefined : this.pendingConfirms.get(frame.CommandId);
        if (watch !== undefined) {
          this.pendingConfirms.delete(frame.CommandId!);
          watch.confirmed.reject(error);
        }
        this.listeners.emit('error', error);
        return;
      }
    }
  }
}

function isDocument(change: DocumentChange | IndexChange): change is DocumentChange {
  return 'Id' in change;
}
