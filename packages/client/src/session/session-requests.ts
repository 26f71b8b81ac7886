// The two requests a session builds from its state: the bulk_docs batch of saveChanges, and the
// document GETs of load (split so that no URL outgrows what servers accept in a request line).
import { MAX_COMMANDS_PER_BATCH } from '@rookery/protocol';
import { clientError } from '../errors.js';
import type { DocumentInfo, TrackedDocuments } from './tracked-documents.js';

export interface Batch {
  /** The request body: `{"Commands":[…]}`, deletes first, then puts. */
  body: string;
  /** Ids deleted, in command order. */
  deletes: string[];
  /** Entities put, in command order (after the deletes). */
  puts: DocumentInfo[];
}

/**
 * The commands of saveChanges: every pending delete and every new or changed entity, or null when there
 * is nothing to send. With optimistic concurrency each command names the change vector the session saw
 * ('' for a new entity: it must not exist yet), so a concurrent change fails the whole batch.
 */
export function buildBatch(tracked: TrackedDocuments, optimistic: boolean): Batch | null {
  const commands: string[] = [];
  const deletes: string[] = [];
  const puts: DocumentInfo[] = [];
  for (const { id, changeVector } of tracked.deleted.values()) {
    const expected = optimistic ? changeVector : null;
    commands.push(`{"Type":"DELETE","Id":${JSON.stringify(id)},"ChangeVector":${JSON.stringify(expected)}}`);
    deletes.push(id);
  }
  for (const info of tracked.all) {
    const serialized = tracked.serialize(info);
    if (info.snapshot !== null && serialized === info.snapshot && info.expectedChangeVector === undefined)
      continue;
    const expected =
      info.expectedChangeVector !== undefined
        ? info.expectedChangeVector
        : optimistic
          ? (info.changeVector ?? '')
          : null;
    // The document is spliced in as serialised: it was just produced by JSON.stringify.
    commands.push(
      `{"Type":"PUT","Id":${JSON.stringify(info.id)},"ChangeVector":${JSON.stringify(expected)},"Document":${serialized}}`,
    );
    puts.push(info);
  }
  if (commands.length === 0) return null;
  if (commands.length > MAX_COMMANDS_PER_BATCH) {
    throw clientError(
      'InvalidArgument',
      `saveChanges would send ${commands.length} commands, over the ${MAX_COMMANDS_PER_BATCH} one transaction takes: save in smaller sessions, or use store.bulkInsert`,
    );
  }
  return { body: `{"Commands":[${commands.join(',')}]}`, deletes, puts };
}

/** Longest path + query string per GET: well under Node's 16 KiB limit for a request's headers. */
const MAX_PATH_LENGTH = 8 * 1024;
/** The server's limit of ids per GET. */
const MAX_IDS_PER_GET = 1024;

/** `GET /databases/{db}/docs?id=…&include=…` paths covering every id, each short enough. */
export function documentsUrlChunks(
  databasePath: string,
  ids: readonly string[],
  includes: readonly string[],
): string[] {
  const base = `${databasePath}/docs?`;
  const includePart = includes.map((path) => `&include=${encodeURIComponent(path)}`).join('');
  const paths: string[] = [];
  let current: string[] = [];
  let length = base.length + includePart.length;
  const flush = () => {
    if (current.length === 0) return;
    paths.push(`${base}${current.join('&')}${includePart}`);
    current = [];
    length = base.length + includePart.length;
  };
  for (const id of ids) {
    const part = `id=${encodeURIComponent(id)}`;
    if (
      current.length > 0 &&
      (length + part.length + 1 > MAX_PATH_LENGTH || current.length >= MAX_IDS_PER_GET)
    )
      flush();
    current.push(part);
    length += part.length + 1;
  }
  flush();
  return paths;
}
