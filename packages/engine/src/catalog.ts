import fs from 'node:fs';
import path from 'node:path';
import { DatabaseNameSchema, RookeryError } from '@rookery/protocol';
import { Database, type DatabaseOptions } from './database.js';
import { hasMirror, isDeleted, markDeleted } from './mirror/layout.js';
import type { MirrorLogger, MirrorMode, MirrorOptions } from './mirror/options.js';
import { type RestoreResult, restoreDatabase } from './mirror/restore.js';
import { localCopySuperseded } from './mirror/superseded.js';

/** How a tenant's databases are mirrored: each to `<root>/<name in lower case>/`. */
export interface CatalogMirrorOptions {
  /** The tenant's own directory on the mirror (tenants never share one). */
  root: string;
  /** The mode of every database not named in `modes`. */
  mode: MirrorMode;
  /** Per-database modes, by name (case-insensitive). */
  modes?: Readonly<Record<string, MirrorMode>>;
  /** Snapshot, retention and lag settings shared by every database. */
  tuning?: Omit<MirrorOptions, 'directory' | 'mode'>;
  loggerFor?: (database: string) => MirrorLogger;
}

/** Deletes a superseded copy once the mirror's state replaced it, and its `superseded/` directory once empty. */
function dropAside(aside: string): void {
  fs.rmSync(aside, { recursive: true, force: true });
  try {
    fs.rmdirSync(path.dirname(aside));
  } catch {
    // Not empty: another superseded copy whose restore failed is kept there for an operator.
  }
}

export interface RestoredDatabase extends RestoreResult {
  database: string;
  ms: number;
  /** A local copy from an earlier ownership was there, superseded by another owner's epoch, and replaced. */
  replacedStaleCopy: boolean;
}

/**
 * The databases of one tenant, each in `<root>/databases/<name in lower case>/`.
 * Databases are created explicitly and opened lazily on first use; names are
 * case-insensitive.
 */
export class DatabaseCatalog {
  private readonly open = new Map<string, Database>();
  private readonly root: string;

  private readonly modes: ReadonlyMap<string, MirrorMode>;

  constructor(
    dataDirectory: string,
    private readonly options: DatabaseOptions = {},
    private readonly mirror: CatalogMirrorOptions | null = null,
  ) {
    this.root = path.join(dataDirectory, 'databases');
    fs.mkdirSync(this.root, { recursive: true });
    this.modes = new Map(
      Object.entries(mirror?.modes ?? {}).map(([name, mode]) => [name.toLowerCase(), mode]),
    );
  }

  /**
   * Restores from the mirror every database that is mirrored (and not deleted) but has no local
   * docs.db: what a tenant does when it starts on a machine that lost its disk, or on a new owner in a
   * fleet. A local copy another owner superseded (mirror/superseded.ts: a host that served the tenant
   * before, A → B → A) counts as missing: it is set aside, the mirror's state restored in its place,
   * and then deleted (kept, for an operator, only if the restore fails); if the other owner deleted the
   * database, it is simply gone. Synchronous: it runs before the tenant serves anything.
   */
  restoreMissing(): RestoredDatabase[] {
    if (!this.mirror) return [];
    let names: string[];
    try {
      names = fs.readdirSync(this.mirror.root);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []; // nothing mirrored yet
      // An unreadable mirror is not an empty one: starting without the databases it holds would let
      // new, empty ones take their names.
      throw new RookeryError(
        'MirrorUnavailable',
        `The mirror at ${this.mirror.root} cannot be read (${(error as Error).message}); fix it before starting this tenant`,
      );
    }
    const restored: RestoredDatabase[] = [];
    for (const key of names.sort()) {
      if (!DatabaseNameSchema.safeParse(key).success || key !== key.toLowerCase()) continue;
      const mirrorDirectory = path.join(this.mirror.root, key);
      const localDirectory = path.join(this.root, key);
      let staleCopy: string | null = null;
      if (Database.exists(localDirectory)) {
        if (!localCopySuperseded(mirrorDirectory, localDirectory, this.mirror.tuning?.epoch ?? 0)) continue;
        staleCopy = this.setAside(key, localDirectory);
      }
      if (isDeleted(mirrorDirectory) || !hasMirror(mirrorDirectory)) {
        if (staleCopy) dropAside(staleCopy);
        continue;
      }
      const started = performance.now();
      const result = restoreDatabase(mirrorDirectory, localDirectory);
      if (staleCopy) dropAside(staleCopy);
      restored.push({
        database: key,
        ms: Math.round(performance.now() - started),
        replacedStaleCopy: staleCopy !== null,
        ...result,
      });
    }
    return restored;
  }

  /** Moves a superseded local copy out of `databases/` (a rename: instant at any size); answers where to. */
  private setAside(key: string, localDirectory: string): string {
    const aside = path.join(path.dirname(this.root), 'superseded', key);
    fs.rmSync(aside, { recursive: true, force: true }); // left by a restore that failed before
    fs.mkdirSync(path.dirname(aside), { recursive: true });
    fs.renameSync(localDirectory, aside);
    return aside;
  }

  create(name: string): Database {
    const key = this.keyOf(name);
    const directory = path.join(this.root, key);
    if (this.open.has(key) || Database.exists(directory)) {
      throw new RookeryError('DatabaseAlreadyExists', `Database ${name} already exists; pick another name`, {
        database: name,
      });
    }
    const db = Database.create(directory, name, this.optionsFor(key));
    this.open.set(key, db);
    return db;
  }

  /** The open database, opening it on first use. */
  get(name: string): Database {
    const key = this.keyOf(name);
    const cached = this.open.get(key);
    if (cached) return cached;
    const directory = path.join(this.root, key);
    if (!Database.exists(directory)) {
      throw new RookeryError(
        'DatabaseNotFound',
        `Database ${name} does not exist; create it first with PUT /admin/databases {"Name":"${name}"}`,
        { database: name },
      );
    }
    const db = Database.open(directory, this.optionsFor(key));
    this.open.set(key, db);
    return db;
  }

  /** Names of every database on disk, whether open or not. */
  list(): string[] {
    return fs
      .readdirSync(this.root, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && Database.exists(path.join(this.root, entry.name)))
      .map((entry) => this.open.get(entry.name)?.name ?? entry.name)
      .sort();
  }

  async delete(name: string): Promise<void> {
    const db = this.get(name);
    const key = this.keyOf(name);
    this.open.delete(key);
    await db.close();
    // Marked on the mirror first: a crash before the local files are gone must not bring the database back.
    if (this.mirror) markDeleted(path.join(this.mirror.root, key), Date.now());
    fs.rmSync(db.directory, { recursive: true, force: true });
  }

  private optionsFor(key: string): DatabaseOptions {
    const mode = this.modes.get(key) ?? this.mirror?.mode ?? 'off';
    if (!this.mirror || mode === 'off') return this.options;
    return {
      ...this.options,
      mirror: { ...this.mirror.tuning, directory: path.join(this.mirror.root, key), mode },
      logger: this.mirror.loggerFor?.(key) ?? this.options.logger,
    };
  }

  /**
   * How far the mirror is behind, the worst of the open mirrored databases (a closed one ships nothing, so
   * it lags nothing): the age of the oldest transaction a restore would not bring back, and how many
   * transactions that is. Null when no open database is mirrored. The tenant reports it to its host, whose
   * /metrics exports it (services/host/src/metrics.ts).
   */
  mirrorLag(): { ms: number; transactions: number } | null {
    const mirrors = [...this.open.values()].flatMap((db) => (db.mirror ? [db.mirror.stats()] : []));
    if (mirrors.length === 0) return null;
    return {
      ms: Math.max(...mirrors.map((m) => m.LagMs)),
      transactions: Math.max(...mirrors.map((m) => m.LagTransactions)),
    };
  }

  /** Closes every open database in parallel, committing what each has queued. */
  async closeAll(): Promise<void> {
    const dbs = [...this.open.values()];
    this.open.clear();
    await Promise.all(dbs.map((db) => db.close()));
  }

  private keyOf(name: string): string {
    const parsed = DatabaseNameSchema.safeParse(name);
    if (!parsed.success) {
      throw new RookeryError(
        'InvalidDatabaseName',
        `"${name}" is not a valid database name: ${parsed.error.issues[0]!.message}`,
        {
          database: name,
        },
      );
    }
    return name.toLowerCase();
  }
}
