import type { SubscriptionStrategy } from '@rookery/protocol';

/** A connected consumer of a subscription, as the registry handles it. */
export interface SubscriptionConsumer {
  /**
   * Ends the consumer's connection with a close code (taken over, subscription deleted, database gone).
   * Resolves once it has let go: its loop stopped and the progress it was recording is on disk, so whoever
   * comes next starts from it.
   */
  end(code: number, reason: string): Promise<void>;
}

interface Slot {
  holder: SubscriptionConsumer | null;
  /** WaitForFree consumers, first come first served. */
  waiting: Array<{ consumer: SubscriptionConsumer; admit: (claimed: boolean) => void }>;
}

/**
 * Who holds each subscription of the tenant: one consumer at a time per subscription, by the strategy it
 * connected with. In memory: a subscription's holder is a connection of this process.
 */
export class SubscriptionRegistry {
  private readonly slots = new Map<string, Slot>();

  isConnected(database: string, name: string): boolean {
    return this.slots.get(keyOf(database, name))?.holder != null;
  }

  /**
   * Makes `consumer` the holder. OpenIfFree: only if nobody holds it (false otherwise). TakeOver: ends the
   * holder (code `takenOverCode`) and waits for it to let go. WaitForFree: waits for every earlier consumer
   * to leave. False also when the consumer was ended or released while it waited.
   */
  async claim(
    database: string,
    name: string,
    consumer: SubscriptionConsumer,
    strategy: SubscriptionStrategy,
    takenOverCode: number,
  ): Promise<boolean> {
    const slot = this.slotOf(database, name);
    if (slot.holder === null) {
      slot.holder = consumer;
      return true;
    }
    switch (strategy) {
      case 'OpenIfFree':
        return false;
      case 'WaitForFree':
        return new Promise((admit) => slot.waiting.push({ consumer, admit }));
      case 'TakeOver': {
        const previous = slot.holder;
        slot.holder = consumer;
        await previous.end(takenOverCode, `subscription ${name} was taken over by another consumer`);
        // A later TakeOver may have taken it in the meantime.
        return slot.holder === consumer;
      }
    }
  }

  /** The consumer is gone: frees what it held (the next waiting consumer gets it) or stops its wait. */
  release(database: string, name: string, consumer: SubscriptionConsumer): void {
    const key = keyOf(database, name);
    const slot = this.slots.get(key);
    if (!slot) return;
    const waiting = slot.waiting.findIndex((w) => w.consumer === consumer);
    if (waiting !== -1) slot.waiting.splice(waiting, 1)[0]!.admit(false);
    if (slot.holder === consumer) {
      const next = slot.waiting.shift();
      slot.holder = next?.consumer ?? null;
      next?.admit(true);
    }
    if (slot.holder === null && slot.waiting.length === 0) this.slots.delete(key);
  }

  /** Ends every consumer of a subscription, holder and waiting ones (it was deleted). */
  async endAll(database: string, name: string, code: number, reason: string): Promise<void> {
    const slot = this.slots.get(keyOf(database, name));
    if (!slot) return;
    const consumers = [...slot.waiting.map((w) => w.consumer), ...(slot.holder ? [slot.holder] : [])];
    await Promise.all(consumers.map((c) => c.end(code, reason)));
  }

  private slotOf(database: string, name: string): Slot {
    const key = keyOf(database, name);
    let slot = this.slots.get(key);
    if (!slot) {
      slot = { holder: null, waiting: [] };
      this.slots.set(key, slot);
    }
    return slot;
  }
}

/** Database and subscription names are both case-insensitive. */
const keyOf = (database: string, name: string) => `${database.toLowerCase()}/${name.toLowerCase()}`;
