// The tenant's door during a planned move (tenant-moves.ts), without processes: a move waits for the
// requests already inside, requests arriving meanwhile wait for the move, and each tenant has its own door.
import { describe, expect, it } from 'vitest';
import { TenantMoves } from './tenant-moves.js';

function gate(): { open: Promise<void>; release: () => void } {
  let release!: () => void;
  const open = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { open, release };
}

const turns = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('TenantMoves', () => {
  it('a move waits for the wakes inside; wakes arriving during the move run after it ended', async () => {
    const moves = new TenantMoves();
    const events: string[] = [];
    const inside = gate();
    const wake1 = moves.admit('acme', async () => {
      events.push('wake 1 in');
      await inside.open;
      events.push('wake 1 out');
    });
    const work = gate();
    const move = moves.closedFor('acme', async () => {
      events.push('move starts');
      await work.open;
      events.push('move ends');
      return 'moved';
    });
    const wake2 = moves.admit('acme', async () => {
      events.push('wake 2 in');
    });
    await turns();
    expect(moves.isMoving('acme')).toBe(true);
    expect(events).toEqual(['wake 1 in']);
    inside.release();
    await wake1;
    await turns();
    expect(events).toEqual(['wake 1 in', 'wake 1 out', 'move starts']);
    work.release();
    expect(await move).toBe('moved');
    await wake2;
    expect(events).toEqual(['wake 1 in', 'wake 1 out', 'move starts', 'move ends', 'wake 2 in']);
    expect(moves.isMoving('acme')).toBe(false);
  });

  it('a failed move opens the door too, and the error reaches the mover', async () => {
    const moves = new TenantMoves();
    await expect(
      moves.closedFor('acme', async () => {
        throw new Error('no host can take it');
      }),
    ).rejects.toThrow('no host can take it');
    expect(await moves.admit('acme', async () => 'woken')).toBe('woken');
  });

  it("two moves of one tenant take turns; another tenant's door stays open", async () => {
    const moves = new TenantMoves();
    const events: string[] = [];
    const first = gate();
    const one = moves.closedFor('acme', async () => {
      events.push('move 1');
      await first.open;
    });
    const two = moves.closedFor('acme', async () => {
      events.push('move 2');
    });
    expect(await moves.admit('bolt', async () => 'bolt woken')).toBe('bolt woken');
    await turns();
    expect(events).toEqual(['move 1']);
    first.release();
    await Promise.all([one, two]);
    expect(events).toEqual(['move 1', 'move 2']);
  });
});
