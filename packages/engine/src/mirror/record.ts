// One committed transaction as the mirror stores it: a fixed 32-byte header and the transaction's
// recorded operations. A record is written with one write() call; the CRC over header and payload
// tells a complete record from a torn one (the tail of a segment being written when the machine
// died), so a reader takes only records that were written whole.
import { crc32 } from 'node:zlib';
import { RookeryError } from '@rookery/protocol';
import { z } from 'zod';
import type { RecordedOps } from '../storage/change-recorder.js';
import { WRITE_OPS } from '../storage/statements.js';

export const RECORD_HEADER_BYTES = 32;
const MAGIC = 0x524b_5458; // "RKTX"
const FORMAT_VERSION = 1;
/** A record bigger than this is not one we wrote (a transaction takes at most 20,000 documents). */
export const MAX_PAYLOAD_BYTES = 1 << 30;

const RecordHeaderSchema = z.object({
  magic: z.literal(MAGIC),
  version: z.literal(FORMAT_VERSION),
  schema: z.number().int().min(1).max(65_535),
  txid: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  committedAt: z.number().int().min(0),
  payloadBytes: z.number().int().min(0).max(MAX_PAYLOAD_BYTES),
  crc: z.number().int().min(0),
});
export type RecordHeader = z.infer<typeof RecordHeaderSchema>;

/** One operation of a transaction: the statement's op code and its parameters. */
export interface Operation {
  code: number;
  params: unknown[];
}

enum Tag {
  Null = 0,
  Int32 = 1,
  Float64 = 2,
  Text = 3,
  Blob = 4,
}

const KNOWN_CODES = new Map<number, number>(Object.values(WRITE_OPS).map((op) => [op.code, op.params]));

/**
 * Encodes a committed transaction as one record (header and payload in one buffer). This runs on
 * the commit path, so it makes one pass: the buffer is sized from the strings' lengths (exact for
 * ASCII) and grows in the rare case multi-byte text does not fit.
 */
export function encodeRecord(txid: number, committedAt: number, schema: number, ops: RecordedOps): Buffer {
  const writer = new RecordWriter(estimateSize(ops));
  for (let i = 0; i < ops.length; i += 2) {
    const params = ops[i + 1] as unknown[];
    writer.ensure(2);
    writer.buffer[writer.at++] = ops[i] as number;
    writer.buffer[writer.at++] = params.length;
    for (const value of params) writer.value(value);
  }
  const buffer = writer.buffer.subarray(0, writer.at);
  buffer.writeUInt32LE(MAGIC, 0);
  buffer[4] = FORMAT_VERSION;
  buffer[5] = 0;
  buffer.writeUInt16LE(schema, 6);
  buffer.writeDoubleLE(txid, 8);
  buffer.writeDoubleLE(committedAt, 16);
  buffer.writeUInt32LE(buffer.length - RECORD_HEADER_BYTES, 24);
  buffer.writeUInt32LE(crc32(buffer.subarray(RECORD_HEADER_BYTES), crc32(buffer.subarray(0, 28))), 28);
  return buffer;
}

function estimateSize(ops: RecordedOps): number {
  let size = RECORD_HEADER_BYTES;
  for (let i = 0; i < ops.length; i += 2) {
    size += 2;
    for (const value of ops[i + 1] as unknown[]) {
      if (typeof value === 'string') size += 5 + value.length;
      else if (Buffer.isBuffer(value)) size += 5 + value.length;
      else size += 9;
    }
  }
  return size;
}

class RecordWriter {
  buffer: Buffer;
  at = RECORD_HEADER_BYTES;

  constructor(size: number) {
    this.buffer = Buffer.allocUnsafe(size);
  }

  ensure(bytes: number): void {
    if (this.buffer.length - this.at >= bytes) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.at + bytes));
    this.buffer.copy(grown, 0, 0, this.at);
    this.buffer = grown;
  }

  value(value: unknown): void {
    if (value === null || value === undefined) {
      this.ensure(1);
      this.buffer[this.at++] = Tag.Null;
    } else if (typeof value === 'number') {
      this.ensure(9);
      if (isInt32(value)) {
        this.buffer[this.at] = Tag.Int32;
        this.buffer.writeInt32LE(value, this.at + 1);
        this.at += 5;
      } else {
        this.buffer[this.at] = Tag.Float64;
        this.buffer.writeDoubleLE(value, this.at + 1);
        this.at += 9;
      }
    } else if (typeof value === 'string') {
      // A UTF-16 unit takes at most 3 bytes; only when that bound does not fit is the exact size worth computing.
      if (this.buffer.length - this.at < 5 + value.length * 3) this.ensure(5 + Buffer.byteLength(value));
      this.buffer[this.at] = Tag.Text;
      const written = this.buffer.write(value, this.at + 5, 'utf8');
      this.buffer.writeUInt32LE(written, this.at + 1);
      this.at += 5 + written;
    } else if (Buffer.isBuffer(value)) {
      this.ensure(5 + value.length);
      this.buffer[this.at] = Tag.Blob;
      this.buffer.writeUInt32LE(value.length, this.at + 1);
      value.copy(this.buffer, this.at + 5);
      this.at += 5 + value.length;
    } else {
      throw new Error(`cannot record a parameter of type ${typeof value}`);
    }
  }
}

function isInt32(value: number): boolean {
  return (value | 0) === value && !Object.is(value, -0);
}

/**
 * Reads a record header at `at`, or null when the bytes there are not a complete, well-formed
 * header (end of data or a torn write). The payload's checksum is checked by `verifyRecord`.
 */
export function readRecordHeader(data: Buffer, at: number): RecordHeader | null {
  if (data.length - at < RECORD_HEADER_BYTES) return null;
  const parsed = RecordHeaderSchema.safeParse({
    magic: data.readUInt32LE(at),
    version: data[at + 4],
    schema: data.readUInt16LE(at + 6),
    txid: data.readDoubleLE(at + 8),
    committedAt: data.readDoubleLE(at + 16),
    payloadBytes: data.readUInt32LE(at + 24),
    crc: data.readUInt32LE(at + 28),
  });
  return parsed.success ? parsed.data : null;
}

/** True when the whole record (header and payload) is present at `at` and its CRC matches. */
export function verifyRecord(data: Buffer, at: number, header: RecordHeader): boolean {
  const end = at + RECORD_HEADER_BYTES + header.payloadBytes;
  if (end > data.length) return false;
  const crc = crc32(data.subarray(at + RECORD_HEADER_BYTES, end), crc32(data.subarray(at, at + 28)));
  return crc === header.crc;
}

/** Decodes a verified record's operations. Unknown op codes or arities mean a newer writer: refused. */
export function decodeOperations(payload: Buffer): Operation[] {
  const ops: Operation[] = [];
  let at = 0;
  const corrupt = (why: string) =>
    new RookeryError('MirrorCorrupt', `A mirrored transaction cannot be decoded (${why})`);
  while (at < payload.length) {
    const code = payload[at]!;
    const count = payload[at + 1];
    at += 2;
    if (count === undefined || KNOWN_CODES.get(code) !== count)
      throw corrupt(`operation ${code} with ${count} parameters`);
    const params: unknown[] = [];
    for (let p = 0; p < count; p++) {
      const tag = payload[at];
      switch (tag) {
        case Tag.Null:
          params.push(null);
          at += 1;
          break;
        case Tag.Int32:
          params.push(payload.readInt32LE(at + 1));
          at += 5;
          break;
        case Tag.Float64:
          params.push(payload.readDoubleLE(at + 1));
          at += 9;
          break;
        case Tag.Text:
        case Tag.Blob: {
          const length = payload.readUInt32LE(at + 1);
          const start = at + 5;
          if (start + length > payload.length) throw corrupt('a value runs past the end');
          params.push(
            tag === Tag.Text
              ? payload.toString('utf8', start, start + length)
              : Buffer.from(payload.subarray(start, start + length)),
          );
          at = start + length;
          break;
        }
        default:
          throw corrupt(`value tag ${tag}`);
      }
    }
    ops.push({ code, params });
  }
  return ops;
}
