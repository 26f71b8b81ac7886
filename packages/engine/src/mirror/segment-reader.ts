import fs from 'node:fs';
import { RECORD_HEADER_BYTES, type RecordHeader, readRecordHeader, verifyRecord } from './record.js';

export interface SegmentRecord {
  header: RecordHeader;
  payload: Buffer;
}

export interface SegmentScan {
  /** Bytes of valid records read. */
  validBytes: number;
  /** Bytes after the last valid record: a torn tail (a write cut off by a crash), ignored. */
  ignoredBytes: number;
}

/**
 * Reads a segment's records in order and stops at the first one that is not whole and intact. Only
 * the tail of a segment can legitimately be torn (records are appended, and everything after a
 * record that did not reach the disk whole was never confirmed either), so whatever follows is
 * ignored; a gap that matters shows up as a missing transaction number in the next segment.
 */
export function scanSegment(
  file: string,
  onRecord: (record: SegmentRecord) => boolean | undefined,
): SegmentScan {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const headerBuffer = Buffer.alloc(RECORD_HEADER_BYTES);
    let at = 0;
    while (at + RECORD_HEADER_BYTES <= size) {
      fs.readSync(fd, headerBuffer, 0, RECORD_HEADER_BYTES, at);
      const header = readRecordHeader(headerBuffer, 0);
      if (!header || at + RECORD_HEADER_BYTES + header.payloadBytes > size) break;
      const whole = Buffer.allocUnsafe(RECORD_HEADER_BYTES + header.payloadBytes);
      fs.readSync(fd, whole, 0, whole.length, at);
      if (!verifyRecord(whole, 0, header)) break;
      at += whole.length;
      if (onRecord({ header, payload: whole.subarray(RECORD_HEADER_BYTES) }) === false) break;
    }
    return { validBytes: at, ignoredBytes: size - at };
  } finally {
    fs.closeSync(fd);
  }
}
