// A writer process for the crash test: 8 concurrent writers issue batches
// through the merger and report each acknowledged batch to the parent over
// IPC, until the parent kills this process with SIGKILL.
import { Database } from '../database.js';

const [directory, firstBatchArg] = process.argv.slice(2);
if (!directory || !firstBatchArg) throw new Error('usage: crash-writer <dir> <first batch number>');
let nextBatch = Number(firstBatchArg);

const db = Database.exists(directory) ? Database.open(directory) : Database.create(directory, 'crash');

async function writer(): Promise<never> {
  for (;;) {
    const batch = nextBatch++;
    const size = 1 + (batch % 5);
    const commands = Array.from({ length: size }, (_, j) => ({
      Type: 'PUT' as const,
      Id: `batches/${batch}/${j}`,
      Document: {
        Batch: batch,
        Size: size,
        Payload: 'x'.repeat(200 + ((batch * 37) % 3000)),
        '@metadata': { '@collection': 'Batches' },
      },
    }));
    // Every batch also bumps a shared total: if any batch were half-applied, the total would disagree with the documents.
    await db.batch([
      ...commands,
      { Type: 'PATCH', Id: 'totals/1', Patch: { Operations: [{ Op: 'increment', Path: 'Docs', By: size }] } },
    ]);
    process.send!({ acked: batch, size });
  }
}

if (!db.get('totals/1'))
  await db.batch([{ Type: 'PUT', Id: 'totals/1', Document: { Docs: 0 }, ChangeVector: '' }]);
process.send!({ ready: true });
await Promise.all(Array.from({ length: 8 }, writer));
