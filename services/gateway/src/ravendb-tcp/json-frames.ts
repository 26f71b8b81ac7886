// RavenDB's TCP messages are JSON objects written back to back, with no length and no separator (the
// client's own reader is a streaming JSON parser). This splits a byte stream into those objects without
// parsing them: it tracks only the nesting depth and whether it is inside a string, so a message is held
// whole only up to `maxBytes`, and anything between objects other than whitespace is refused at once.
// Scanning bytes is safe for UTF-8: every byte of a multi-byte character is ≥ 0x80, never `{ } " \`.
import { gatewayError } from '../refusal.js';

const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

export class JsonFrameReader {
  private readonly parts: Buffer[] = [];
  private held = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;

  constructor(private readonly maxBytes: number) {}

  /**
   * The whole messages `chunk` completes, as text. Throws a RookeryError (InvalidRequest, PayloadTooLarge)
   * for bytes that are not a JSON object or a message over `maxBytes`; the connection is then beyond repair.
   */
  push(chunk: Buffer): string[] {
    const messages: string[] = [];
    let start = this.depth > 0 ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (this.depth === 0) {
        if (WHITESPACE.has(byte)) continue;
        if (byte !== OPEN) {
          throw gatewayError(
            'InvalidRequest',
            "RavenDB's TCP protocol takes JSON objects only (a TcpConnectionHeaderMessage first); this is not one.",
          );
        }
        start = i;
        this.depth = 1;
        continue;
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (byte === BACKSLASH) this.escaped = true;
        else if (byte === QUOTE) this.inString = false;
        continue;
      }
      if (byte === QUOTE) this.inString = true;
      else if (byte === OPEN) this.depth++;
      else if (byte === CLOSE && --this.depth === 0) {
        this.hold(chunk.subarray(start, i + 1));
        messages.push(Buffer.concat(this.parts.splice(0)).toString('utf8'));
        this.held = 0;
        start = -1;
      }
    }
    if (this.depth > 0 && start >= 0) this.hold(chunk.subarray(start));
    return messages;
  }

  private hold(bytes: Buffer): void {
    this.held += bytes.length;
    if (this.held > this.maxBytes) {
      throw gatewayError(
        'PayloadTooLarge',
        `A message of RavenDB's TCP protocol is at most ${this.maxBytes} bytes here (a header, the worker's options or an acknowledgement).`,
        { limit: 'ravenTcpMessageBytes', value: this.maxBytes },
      );
    }
    this.parts.push(bytes);
  }
}
