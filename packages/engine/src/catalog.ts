import fs from 'node:fs';
import path from 'node:path';
import { DatabaseNameSchema, RookeryError } from '@rookery/protocol';
import { Database, type DatabaseOptions } from './database.js';

/**
 * The databases of one tenant, each in `<root>/databases/<name in lower case>/`.
 * Databases are created explicitly and opened lazily on first use; names are
 * case-insensitive.
 */
export class DatabaseCatalog {
  private readonly open = new Map<string, Database>();
  private readonly root: string;

  constructor(
    dataDirectory: string,
    private readonly options: DatabaseOptions = {},
  ) {
    this.root = path.join(dataDirectory, 'databases');
    fs.mkdirSync(this.root, { recursive: true });
  }

  create(name: string): Database {
    const key = this.keyOf(name);
    const directory = path.join(this.root, key);
    if (this.open.has(key) || Database.exists(directory)) {
      throw new RookeryError('DatabaseAlreadyExists', `Database ${name} already exists; pick another name`, {
        database: name,
      });
    }
    const db = Database.create(directory, name, this.options);
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
    const db = Database.open(directory, this.options);
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
    fs.rmSync(db.directory, { recursive: true, force: true });
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
