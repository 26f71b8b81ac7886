import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTempDir, spawnTs, waitForExit } from '@rookery/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { Database } from './database.js';

const WRITER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'test-fixtures', 'crash-writer.ts');
const ROUNDS = 20;

const tmp = makeTempDir('rookery-crash-');
afterAll(() => tmp.cleanup());

interface Acked {
  acked: number;
  size: number;
}

/** Runs the writer until it has been acknowledged for a while, then SIGKILLs it at a random moment. */
async function crashRound(firstBatch: number, acked: Map<number, number>): Promise<void> {
  const child = spawnTs(WRITER, [tmp.dir, String(firstBatch)]);
  const exited = waitForExit(child);
  await new Promise<void>((resolve, reject) => {
    child.on('message', (message: Acked | { ready: true }) => {
      if ('ready' in message) {
        setTimeout(
          () => {
            child.kill('SIGKILL');
            resolve();
          },
          30 + Math.random() * 300,
        );
      } else {
        acked.set(message.acked, message.size);
      }
    });
    void exited.then(({ signal }) => {
      if (signal !== 'SIGKILL') reject(new Error(`writer exited on its own (signal ${signal})`));
    });
  });
  await exited;
}

describe('crash safety', () => {
  it(`loses no acknowledged batch and applies no batch halfway across ${ROUNDS} SIGKILLs`, async () => {
    const acked = new Map<number, number>();
    let totalAcked = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const before = acked.size;
      // Each round starts at a fresh batch number so rounds never reuse ids.
      await crashRound(round * 1_000_000, acked);

      const db = Database.open(tmp.dir);
      try {
        const present = new Map<number, Set<number>>();
        const sizes = new Map<number, number>();
        for (const change of db.changesAfter(0, 10_000_000)) {
          if (change.deleted || !change.id.startsWith('batches/')) continue;
          const [, batch, item] = change.id.split('/');
          const set = present.get(Number(batch)) ?? new Set<number>();
          set.add(Number(item));
          present.set(Number(batch), set);
          sizes.set(Number(batch), (JSON.parse(db.get(change.id)!.json) as { Size: number }).Size);
        }
        for (const [batch, size] of acked) {
          expect(present.get(batch)?.size, `acknowledged batch ${batch} is missing documents`).toBe(size);
        }
        let documents = 0;
        for (const [batch, items] of present) {
          expect(items.size, `batch ${batch} is half-applied`).toBe(sizes.get(batch));
          documents += items.size;
        }
        const total = JSON.parse(db.get('totals/1')!.json) as { Docs: number };
        expect(total.Docs, 'the running total disagrees with the documents present').toBe(documents);
      } finally {
        await db.close();
      }
      totalAcked += acked.size - before;
    }
    // The test is only meaningful if the writer got real work acknowledged before being killed.
    expect(totalAcked).toBeGreaterThan(ROUNDS * 5);
  }, 180_000);
});
