// Whether a local copy of a database is stale because another owner served it since (a fleet: docs/mirror.md,
// "Epochs and fencing"). A host can hold files from an earlier ownership of a tenant (A → B → A); once
// another placement epoch has written the database's mirror, those files lack what that owner acknowledged,
// and branching a new generation off them would hide it from every later restore. The mirror knows: the
// local copy records the generation it last shipped to or was restored from (mirror.json), and generation
// names carry their owner's epoch.
import { epochOfGeneration, listGenerations, readLocalState } from './layout.js';

/**
 * True when a generation of an epoch newer than the local copy's, and not `epoch` itself (this owner's:
 * it may have started one before it recorded it locally), exists on the mirror. Epoch 0 (one machine)
 * has no other owner: never.
 */
export function localCopySuperseded(mirrorDirectory: string, localDirectory: string, epoch: number): boolean {
  if (epoch === 0) return false;
  const local = readLocalState(localDirectory);
  // Never shipped (no record): any owner's generation is newer than it.
  const localEpoch = local ? epochOfGeneration(local.generation) : 0;
  return listGenerations(mirrorDirectory).some((generation) => {
    const owner = epochOfGeneration(generation);
    return owner > localEpoch && owner !== epoch;
  });
}
