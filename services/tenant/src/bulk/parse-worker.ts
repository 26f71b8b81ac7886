// Bulk insert's parse thread: one per tenant process, serving every bulk
// insert in flight (each a session). It turns the bytes the request thread
// forwards into chunks of prepared documents and posts them back in order.
import { parentPort } from 'node:worker_threads';
import { RookeryError } from '@rookery/protocol';
import { BulkLineParser } from './line-parser.js';
import { type FromParseThread, ToParseThreadSchema } from './parse-messages.js';

const port = parentPort;
if (!port) throw new Error('parse-worker.ts runs as a worker thread (see parse-thread.ts)');

const sessions = new Map<number, BulkLineParser>();
const post = (message: FromParseThread) => port.postMessage(message);

port.on('message', (raw: unknown) => {
  const message = ToParseThreadSchema.parse(raw);
  const { session } = message;
  if (message.type === 'open') {
    sessions.set(
      session,
      new BulkLineParser(message.maxDocumentBytes, (chunk) => post({ type: 'chunk', session, chunk })),
    );
    return;
  }
  const parser = sessions.get(session);
  if (!parser) return; // closed, or failed earlier: the rest of its bytes are dropped
  try {
    if (message.type === 'data') {
      parser.push(Buffer.from(message.bytes.buffer, message.bytes.byteOffset, message.bytes.byteLength));
      post({ type: 'consumed', session, bytes: message.bytes.byteLength });
    } else if (message.type === 'end') {
      parser.end();
      sessions.delete(session);
      post({ type: 'ended', session });
    } else {
      sessions.delete(session);
    }
  } catch (error) {
    sessions.delete(session);
    const failure =
      error instanceof RookeryError
        ? error
        : new RookeryError(
            'InternalError',
            `Bulk insert could not parse its input: ${(error as Error).message}`,
          );
    post({
      type: 'failed',
      session,
      chunk: parser.takePending(),
      error: { code: failure.code, message: failure.message, details: { ...failure.details } },
    });
  }
});
