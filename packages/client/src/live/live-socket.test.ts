import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type WebSocket from 'ws';
import { PushQueue } from './listeners.js';
import { Backoff, watchLiveness } from './live-socket.js';

afterEach(() => {
  vi.useRealTimers();
});

/** Enough of a ws socket for the watchdog: events, and terminate() recorded. */
function fakeSocket() {
  const socket = new EventEmitter() as EventEmitter & { terminated: number; terminate(): void };
  socket.terminated = 0;
  socket.terminate = () => {
    socket.terminated += 1;
  };
  return socket;
}

describe('watchLiveness', () => {
  it('keeps a socket that is pinged, and cuts one that missed more than two pings', () => {
    vi.useFakeTimers();
    const socket = fakeSocket();
    const stop = watchLiveness(socket as unknown as WebSocket, 1_000);
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(1_000);
      socket.emit('ping');
    }
    expect(socket.terminated).toBe(0);
    vi.advanceTimersByTime(2_000); // two pings missed: still within the grace
    expect(socket.terminated).toBe(0);
    vi.advanceTimersByTime(1_000);
    expect(socket.terminated).toBe(1);
    stop();
  });
});

describe('Backoff', () => {
  it('grows from the minimum to the maximum, with jitter in the upper half, and starts again after reset', () => {
    const backoff = new Backoff(100, 1_000);
    const delays = Array.from({ length: 8 }, () => backoff.next());
    const ceilings = [100, 200, 400, 800, 1_000, 1_000, 1_000, 1_000];
    delays.forEach((delay, i) => {
      expect(delay).toBeGreaterThanOrEqual(ceilings[i]! / 2);
      expect(delay).toBeLessThanOrEqual(ceilings[i]!);
    });
    backoff.reset();
    expect(backoff.next()).toBeLessThanOrEqual(100);
  });
});

describe('PushQueue', () => {
  it('hands pushed events to for-await in order and fails a consumer that falls too far behind', async () => {
    const queue = new PushQueue<number>(3, () => undefined);
    queue.push(1);
    queue.push(2);
    expect(await queue.next()).toEqual({ value: 1, done: false });
    const waiting = queue.next();
    expect(await waiting).toEqual({ value: 2, done: false });
    const later = queue.next();
    queue.push(3);
    expect(await later).toEqual({ value: 3, done: false });
    for (let i = 0; i < 4; i++) queue.push(10 + i); // the 4th is one too many
    for (let i = 0; i < 3; i++) expect((await queue.next()).value).toBe(10 + i);
    await expect(queue.next()).rejects.toMatchObject({ code: 'ConsumerTooSlow' });
  });
});
