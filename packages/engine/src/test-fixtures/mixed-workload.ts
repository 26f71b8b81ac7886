import type { Command } from '@rookery/protocol';
import type { Database } from '../database.js';

/** A small deterministic PRNG (mulberry32), so a failing workload can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * One step of a workload that touches everything docs.db stores: new, updated, deleted and
 * re-created documents (small, and big enough to be stored compressed), expiry and archive
 * metadata, patches, HiLo and identity ids, bulk chunks, index definitions, subscriptions and
 * their progress, archival and expiration sweeps, and batches that fail half-way (their writes must vanish with their
 * savepoint). Operations of a step run concurrently, so the merger puts several in one transaction.
 */
export async function mixedStep(db: Database, random: () => number, step: number): Promise<void> {
  const pick = (n: number) => Math.floor(random() * n);
  const id = () => `things/${pick(40)}`;
  const body = (i: number) => ({
    N: i,
    Text: 'word '.repeat(random() < 0.2 ? 1500 : 1 + pick(40)),
    Ünïcode: 'żółw 🐢',
    '@metadata': {
      '@collection': random() < 0.8 ? 'Things' : 'things',
      ...(random() < 0.1 ? { '@expires': '2030-01-01T00:00:00.000Z' } : {}),
      ...(random() < 0.1 ? { '@archive-at': '2029-01-01T00:00:00.000Z' } : {}),
    },
  });
  const work: Promise<unknown>[] = [];
  for (let i = 0; i < 12; i++) {
    const kind = pick(10);
    const n = step * 100 + i;
    let commands: Command[];
    if (kind <= 2) commands = [{ Type: 'PUT', Id: id(), Document: body(n) }];
    else if (kind === 3) commands = [{ Type: 'DELETE', Id: id() }];
    else if (kind === 4)
      commands = [
        { Type: 'PATCH', Id: 'counters/1', Patch: { Operations: [{ Op: 'increment', Path: 'N', By: 1 }] } },
      ];
    else if (kind === 5)
      commands = [{ Type: 'PUT', Id: random() < 0.5 ? 'others/' : 'others|', Document: body(n) }];
    else if (kind === 6) {
      // Fails on its second command, after the first one ran: the first must not survive.
      commands = [
        { Type: 'PUT', Id: `doomed/${n}`, Document: body(n) },
        { Type: 'PUT', Id: 'counters/1', Document: { N: -1 }, ChangeVector: 'A:1-nope' },
      ];
    } else if (kind === 7) {
      work.push(db.nextHiLo(random() < 0.5 ? 'things' : 'others', 32, undefined));
      continue;
    } else if (kind === 8) {
      work.push(
        db.insertMany(
          Array.from({ length: 1 + pick(30) }, (_, j) => ({ Id: `bulk/${n}-${j}`, Document: body(j) })),
        ),
      );
      continue;
    } else {
      const name = `Things/By${pick(3)}`;
      work.push(
        random() < 0.7
          ? db.putIndexDefinition({ Name: name, Maps: [{ Collection: 'Things', Fields: { N: 'N' } }] })
          : db.deleteIndexDefinition(name),
      );
      continue;
    }
    work.push(db.batch(commands));
  }
  // A sweep "later than" every date above, every third step: it archives and expires what earlier
  // steps scheduled. It draws nothing from `random`, so the rest of a seed's workload is unchanged.
  if (step % 3 === 2) work.push(db.sweepDue(Date.parse('2031-01-01T00:00:00Z'), { limit: 20 }));
  // Subscriptions: created (twice: the second fails alone), their progress recorded, some deleted. Also no `random`.
  const subscription = `things-${step >> 2}`;
  if (step % 4 === 0) {
    const startFrom = step % 8 === 0 ? 'Beginning' : 'Now';
    work.push(
      db.createSubscription({
        name: subscription,
        query: 'from Things where N > $min',
        parameters: { min: 5 },
        startFrom,
      }),
    );
    work.push(db.createSubscription({ name: subscription, query: 'from Things', startFrom }));
  } else if (step % 4 === 1) work.push(db.recordSubscriptionProgress(subscription, db.lastEtag, true));
  else if (step % 4 === 2) work.push(db.recordSubscriptionProgress(subscription, db.lastEtag + 1, false));
  else if (step % 8 === 3) work.push(db.deleteSubscription(subscription));
  await Promise.allSettled(work);
}

/** Creates what the workload patches. */
export async function prepareWorkload(db: Database): Promise<void> {
  await db.batch([{ Type: 'PUT', Id: 'counters/1', Document: { N: 0 } }]);
}
