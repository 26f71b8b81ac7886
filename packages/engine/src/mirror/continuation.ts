import { walkChain } from './chain.js';
import { generationDir, listGenerations, listSnapshots, readLocalState } from './layout.js';
import { removeUnfinishedSnapshots } from './snapshot.js';

export interface Continuation {
  generation: string;
  txid: number;
  snapshot: { txid: number; takenAt: number };
}

/**
 * Whether the local docs.db is exactly where the mirror's newest restorable generation ends: it must
 * be the generation the file says it continues, that generation must have a snapshot, and its
 * unbroken chain must end exactly at the file's last transaction. Anything else (transactions
 * committed here but never shipped, a file older than the mirror, a generation without a snapshot)
 * means the history cannot be proven unbroken: the caller starts a new generation. Epochs are the
 * caller's business: an owner continues a generation of its own epoch, and starts a new one
 * (recording this one as its parent) when it took the database over from an older epoch.
 */
export function findContinuation(
  mirrorDirectory: string,
  localDirectory: string,
  localTxid: number,
): Continuation | null {
  const local = readLocalState(localDirectory);
  if (!local) return null;
  const newest = newestRestorableGeneration(mirrorDirectory);
  if (newest?.generation !== local.generation) return null;
  removeUnfinishedSnapshots(generationDir(mirrorDirectory, newest.generation));
  const walk = walkChain(generationDir(mirrorDirectory, newest.generation), newest.snapshot.txid, () => true);
  if (walk.lastTxid !== localTxid) return null;
  return { generation: newest.generation, txid: walk.lastTxid, snapshot: newest.snapshot };
}

/** The newest generation that has a snapshot, with its latest snapshot. */
export function newestRestorableGeneration(
  mirrorDirectory: string,
): { generation: string; snapshot: { txid: number; takenAt: number; file: string } } | null {
  const generations = listGenerations(mirrorDirectory);
  for (let i = generations.length - 1; i >= 0; i--) {
    const snapshots = listSnapshots(generationDir(mirrorDirectory, generations[i]!));
    const latest = snapshots[snapshots.length - 1];
    if (latest) return { generation: generations[i]!, snapshot: latest };
  }
  return null;
}
