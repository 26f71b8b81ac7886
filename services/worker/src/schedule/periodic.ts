// A tick repeated every `tickMs`, one at a time: the next waits for the one before to end, so a
// slow pass (a large mirror, a slow queue) never overlaps itself. Its errors go to `onError` and
// the loop goes on: a scheduler must outlive a bad pass.
export class Periodic {
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> = Promise.resolve();

  constructor(
    private readonly tick: () => Promise<unknown>,
    private readonly tickMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    const loop = () => {
      this.ticking = this.tick()
        .then(() => undefined)
        .catch(this.onError)
        .finally(() => {
          if (this.timer !== null) this.timer = setTimeout(loop, this.tickMs);
        });
    };
    this.timer = setTimeout(loop, 0);
  }

  /** Stops the loop and waits for a running pass. */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
  }
}
