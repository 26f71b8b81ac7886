// One way to open the control store from configuration: PostgreSQL when a
// connection string is given (the scale-out deployment), the embedded SQLite
// file under the data directory otherwise. Every process that takes these two
// settings (gateway, CLI, worker) opens the same store the same way.
import { controlPaths } from './paths.js';
import type { ControlStore } from './store/control-store.js';
import { openPostgresControlStore } from './store/postgres.js';
import { openSqliteControlStore } from './store/sqlite.js';

export interface OpenControlStoreOptions {
  /** The embedded deployment's data directory (holds control/control.db). */
  dataDir: string;
  /** A PostgreSQL connection string; when set, the SQLite file is not used. */
  databaseUrl?: string | undefined;
}

export function openControlStore(options: OpenControlStoreOptions): Promise<ControlStore> {
  return options.databaseUrl
    ? openPostgresControlStore(options.databaseUrl)
    : openSqliteControlStore(controlPaths(options.dataDir).controlDatabase);
}
