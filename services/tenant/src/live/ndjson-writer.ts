import type { ServerResponse } from 'node:http';
import {
  PROBLEM_CONTENT_TYPE,
  type RookeryError,
  type StreamEndLine,
  type StreamErrorLine,
  WORK_UNITS_HEADER,
} from '@rookery/protocol';
import { WORK_UNIT_BYTES } from '../http/work-units.js';

/** The reader closed the connection before the stream ended: nobody to write to, the producer stops. */
export class ReaderGone extends Error {
  constructor() {
    super('the reader closed the connection before the end of the stream');
    this.name = 'ReaderGone';
  }
}

/**
 * Writes an NDJSON answer (`application/x-ndjson`) on a hijacked response, as fast as the reader takes it:
 * `write` resolves once the socket took the lines or, when its buffer is full, once it drained. So a
 * producer that awaits each write holds one page, whatever the stream's length and the reader's pace.
 * Nothing here times out: a slow reader that is still reading is served at its pace (the tenant's HTTP
 * server sets no request or socket timeout either; see streams.test.ts).
 *
 * Work units: the answer's headers leave before its size is known, so `x-rookery-work-units` carries the
 * request side only (set by the server's onRequest hook), and the full figure follows as an HTTP trailer
 * of the same name once the stream ended.
 */
export class NdjsonWriter {
  private started = false;
  private bytesOut = 0;
  private gone = false;
  private interruptedWith: RookeryError | null = null;
  /** Wakes whoever waits for 'drain' (the reader left, or the stream was interrupted). */
  private wake: (() => void) | null = null;

  constructor(private readonly response: ServerResponse) {
    response.once('close', () => {
      if (!response.writableFinished) this.gone = true;
      this.wake?.();
    });
  }

  /** Bytes of lines written so far. */
  get bytesWritten(): number {
    return this.bytesOut;
  }

  get readerGone(): boolean {
    return this.gone;
  }

  /** The error the stream was interrupted with, if it was. */
  get interruption(): RookeryError | null {
    return this.interruptedWith;
  }

  /**
   * Writes one page of lines (each one JSON value, without its newline). Rejects with ReaderGone once the
   * reader left, or with the error the stream was interrupted with.
   */
  async write(lines: readonly string[]): Promise<void> {
    this.check();
    if (lines.length === 0) return;
    this.start(200, 'application/x-ndjson');
    const chunk = `${lines.join('\n')}\n`;
    this.bytesOut += Buffer.byteLength(chunk);
    if (!this.response.write(chunk)) await this.drained();
    this.check();
  }

  /** Ends the stream with its `@end` line (the reader knows it got everything), or with no line of its own. */
  end(line: StreamEndLine | null): void {
    if (this.gone) return;
    this.start(200, 'application/x-ndjson');
    this.finish(line === null ? '' : `${JSON.stringify(line)}\n`);
  }

  /** True once the headers left: a failure can no longer be told by the answer's status. */
  get headersSent(): boolean {
    return this.started;
  }

  /**
   * Ends a stream that failed: a problem answer with the error's status if nothing was sent yet, else an
   * `@error` line in place of `@end`.
   */
  fail(error: RookeryError): void {
    if (this.gone || this.response.writableEnded) return;
    if (!this.started) {
      this.start(error.status, PROBLEM_CONTENT_TYPE);
      this.finish(JSON.stringify(error.toProblem()));
      return;
    }
    const line: StreamErrorLine = { '@error': { code: error.code, detail: error.message } };
    this.finish(`${JSON.stringify(line)}\n`);
  }

  /**
   * Stops the stream from outside (its database closing, the tenant stopping): the pending or next
   * `write` rejects with `error`, which the producer reports with `fail`.
   */
  interrupt(error: RookeryError): void {
    this.interruptedWith ??= error;
    this.wake?.();
  }

  /**
   * Closes the connection once this answer has been sent, rather than keeping it for a next request: the
   * server is stopping, and an idle kept-alive connection would hold its close until the client drops it.
   */
  closeConnectionAfterwards(): void {
    const socket = this.response.socket;
    if (!socket) return;
    if (this.response.writableFinished) socket.end();
    else this.response.once('finish', () => socket.end());
  }

  /** Cuts the connection (a reader that does not take even the last line of an interrupted stream). */
  destroy(): void {
    this.response.destroy();
  }

  private check(): void {
    if (this.gone) throw new ReaderGone();
    if (this.interruptedWith) throw this.interruptedWith;
  }

  private drained(): Promise<void> {
    if (this.gone || this.interruptedWith) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.response.off('drain', done);
        this.wake = null;
        resolve();
      };
      this.response.on('drain', done);
      this.wake = done;
    });
  }

  private start(status: number, contentType: string): void {
    if (this.started) return;
    this.started = true;
    this.response.writeHead(status, {
      'content-type': contentType,
      // Announced so that HTTP/1.1 intermediaries keep it (the gateway reads it, and does not forward it).
      trailer: WORK_UNITS_HEADER,
    });
  }

  private finish(last: string): void {
    this.bytesOut += Buffer.byteLength(last);
    this.response.write(last);
    const floor = Number(this.response.getHeader(WORK_UNITS_HEADER)) || 1;
    this.response.addTrailers({
      [WORK_UNITS_HEADER]: String(floor + Math.ceil(this.bytesOut / WORK_UNIT_BYTES)),
    });
    this.response.end();
  }
}
