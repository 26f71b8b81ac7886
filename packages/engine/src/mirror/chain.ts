import path from 'node:path';
import { listSegments, SEGMENTS_DIR } from './layout.js';
import { type SegmentRecord, scanSegment } from './segment-reader.js';

export interface ChainWalk {
  /** The last transaction of the unbroken chain that was visited. */
  lastTxid: number;
  /** `end`: every segment read; `gap`: a transaction is missing (later ones cannot be applied); `stopped`: the visitor said so. */
  stoppedBy: 'end' | 'gap' | 'stopped';
  /** Bytes of segment files read. */
  bytesRead: number;
}

/**
 * Visits, in order, every transaction of a generation after `afterTxid` (a snapshot's position)
 * for as long as the chain is unbroken: each transaction number must follow the previous one.
 * Segments overlap where a write was retried into a new segment; transactions already visited are
 * skipped. The visitor returns false to stop before a transaction (a point-in-time limit).
 */
export function walkChain(
  generationDirectory: string,
  afterTxid: number,
  visit: (record: SegmentRecord) => boolean,
): ChainWalk {
  const segments = listSegments(generationDirectory);
  const directory = path.join(generationDirectory, SEGMENTS_DIR);
  let last = afterTxid;
  let bytesRead = 0;
  let stoppedBy: ChainWalk['stoppedBy'] = 'end';
  for (let i = 0; i < segments.length && stoppedBy === 'end'; i++) {
    const next = segments[i + 1];
    // Wholly before the position (the next segment starts at or before the transaction we need).
    if (next && next.firstTxid <= last + 1) continue;
    if (segments[i]!.firstTxid > last + 1) {
      stoppedBy = 'gap';
      break;
    }
    const scan = scanSegment(path.join(directory, segments[i]!.file), (record) => {
      const txid = record.header.txid;
      if (txid <= last) return true;
      if (txid !== last + 1) {
        stoppedBy = 'gap';
        return false;
      }
      if (!visit(record)) {
        stoppedBy = 'stopped';
        return false;
      }
      last = txid;
      return true;
    });
    bytesRead += scan.validBytes + scan.ignoredBytes;
  }
  return { lastTxid: last, stoppedBy, bytesRead };
}
