// What aggressivelyCacheFor() returns: call dispose() (or let `using` do it) to end that period.

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
  return { dispose, [Symbol.dispose]: dispose, ensureSubscribedNow: ready };
}
