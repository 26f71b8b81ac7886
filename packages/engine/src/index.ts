export { DatabaseCatalog } from './catalog.js';
export {
  type ChangeEntry,
  type CommitListener,
  Database,
  type DatabaseOptions,
  type LoadedDocument,
} from './database.js';
export { idKey } from './ids.js';
export { referencedIds } from './includes.js';
export type { SynchronousMode } from './storage/schema.js';
export type { DocumentChange } from './write-transaction.js';
