// A deadline shared by several waits in a row (a spare's readiness, then the tenant's): one timer, and
// whatever is raced against it fails with the deadline's error once it has passed.

export class Deadline {
  private readonly timer: NodeJS.Timeout;
  private readonly expired: Promise<never>;

  /** `onExpiry` runs once when the deadline passes (kill what overran, log) and returns the error. */
  constructor(ms: number, onExpiry: () => Error) {
    let timer: NodeJS.Timeout | undefined;
    this.expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(onExpiry()), ms);
    });
    this.timer = timer!;
    // Passing it between two races is no unhandled rejection: each race has its own handler.
    this.expired.catch(() => {});
  }

  race<T>(work: Promise<T>): Promise<T> {
    return Promise.race([work, this.expired]);
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

/** `work`, or the deadline's error if it takes longer than `ms` (work goes on; the caller stops waiting). */
export async function withinDeadline<T>(work: Promise<T>, ms: number, onExpiry: () => Error): Promise<T> {
  const deadline = new Deadline(ms, onExpiry);
  try {
    return await deadline.race(work);
  } finally {
    deadline.clear();
  }
}
