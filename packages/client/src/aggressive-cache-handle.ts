// What aggressivelyCacheFor() returns: call dispose() (or let `using` do it) to end that period.

/** Symbol.dispose where the runtime has it (Node 20.4+), else the registered symbol `using` looks for. */
const disposeSymbol: typeof Symbol.dispose =
  Symbol.dispose ?? (Symbol.for('nodejs.dispose') as typeof Symbol.dispose);

export interface AggressiveCacheHandle extends Disposable {
  dispose(): void;
  /**
   * Resolves once the changes connection that keeps the cache honest is up and its watches confirmed:
   * from then on reads may be served without a request, and any write is noticed.
   */
  ensureSubscribedNow(): Promise<void>;
}

export function disposable(onDispose: () => void, ready: () => Promise<void>): AggressiveCacheHandle {
  let disposed = false;
  const dispose = () => {
    if (disposed) return;
    disposed = true;
    onDispose();
  };
  return { dispose, [disposeSymbol]: dispose, ensureSubscribedNow: ready };
}
