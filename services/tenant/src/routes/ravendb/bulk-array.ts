import { RookeryError } from '@rookery/protocol';

const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d; // }
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;

/**
 * RavenDB's bulk insert body — one JSON array of commands `[{"Id":…,"Type":"PUT","Document":{…}},…]`, streamed
 * for as long as the client stores — turned into the NDJSON lines Rookery's bulk insert parses
 * (bulk/line-parser.ts), so both go through the same parse thread, chunks and transactions.
 *
 * It rewrites each buffer in place, byte for byte and without holding any of it: the array's `[` becomes a
 * space, the commas between its elements and its `]` newlines, and raw line breaks elsewhere outside strings
 * (pretty-printed JSON) spaces. Every other byte stays, so an element's size is held to the line parser's
 * limit of a document, not to anything here. UTF-8's multi-byte sequences never contain these ASCII bytes.
 */
export class JsonArrayToLines {
  private state: 'before' | 'inside' | 'after' = 'before';
  /** Nesting inside the array: 1 between its elements. */
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Whether the current element has begun: `[,` `,,` and `,]` are not JSON (and would be blank lines). */
  private inElement = false;
  private elements = 0;

  /** Rewrites `data` (a buffer of the request, ours to change) and returns it. */
  push(data: Buffer): Buffer {
    for (let i = 0; i < data.length; i++) {
      const byte = data[i]!;
      if (this.state !== 'inside') {
        if (byte === SPACE || byte === LF || byte === CR || byte === TAB) continue;
        if (this.state === 'before' && byte === OPEN_ARRAY) {
          this.state = 'inside';
          this.depth = 1;
          data[i] = SPACE;
          continue;
        }
        throw notAnArray(this.state === 'before' ? 'does not start with [' : 'goes on after its closing ]');
      }
      if (
        this.depth === 1 &&
        !this.inString &&
        byte !== SPACE &&
        byte !== LF &&
        byte !== CR &&
        byte !== TAB
      ) {
        if (byte === COMMA || byte === CLOSE_ARRAY) {
          if (!this.inElement && (byte === COMMA || this.elements > 0))
            throw notAnArray('has an empty element');
          this.inElement = false;
        } else if (!this.inElement) {
          this.inElement = true;
          this.elements++;
        }
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (byte === BACKSLASH) this.escaped = true;
        else if (byte === QUOTE) this.inString = false;
        continue;
      }
      switch (byte) {
        case QUOTE:
          this.inString = true;
          break;
        case OPEN_ARRAY:
        case OPEN_OBJECT:
          this.depth++;
          break;
        case CLOSE_ARRAY:
        case CLOSE_OBJECT:
          this.depth--;
          if (this.depth === 0) {
            if (byte !== CLOSE_ARRAY) throw notAnArray('closes its array with }');
            this.state = 'after';
            data[i] = LF;
          }
          break;
        case COMMA:
          if (this.depth === 1) data[i] = LF;
          break;
        case LF:
        case CR:
          data[i] = SPACE;
          break;
      }
    }
    return data;
  }

  /**
   * True once the array's `]` went by. RavenDB's clients never end the request's body: the array's end is
   * the end of the bulk insert, answered while the body is still open.
   */
  get closed(): boolean {
    return this.state === 'after';
  }

  /** At the end of the body: throws unless the array was closed. */
  end(): void {
    if (this.state !== 'after') throw notAnArray('ended before its closing ]');
  }
}

function notAnArray(what: string): RookeryError {
  return new RookeryError(
    'InvalidJson',
    `A bulk insert sent as application/json is one JSON array of commands ({"Id", "Type": "PUT", "Document"}), and this one ${what} (or send NDJSON lines with "Content-Type: application/x-ndjson")`,
  );
}
