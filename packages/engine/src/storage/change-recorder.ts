/**
 * What one write transaction changed in docs.db, as the statements that did it: op code and
 * parameters, in execution order. This is the mirror's logical commit log. Recording happens at
 * the statement layer (every statement that writes docs.db goes through `recorded()` in
 * statements.ts), so a new kind of write cannot be forgotten by the mirror: there is no other
 * way to write.
 */
export class ChangeRecorder {
  /** Flat `code, params, code, params, …`: no object per operation on the hot path. */
  private entries: unknown[] = [];

  record(code: number, params: readonly unknown[]): void {
    this.entries.push(code, params);
  }

  /** Where a unit of work starts: rolling back to its savepoint drops what it recorded after this. */
  mark(): number {
    return this.entries.length;
  }

  rollbackTo(mark: number): void {
    this.entries.length = mark;
  }

  get isEmpty(): boolean {
    return this.entries.length === 0;
  }

  /** Hands the recorded operations over and starts a new, empty list (the old one is never mutated again). */
  take(): RecordedOps {
    const taken = this.entries;
    this.entries = [];
    return taken as RecordedOps;
  }

  /** Forgets writes made outside the merger (database creation), which the first snapshot covers. */
  clear(): void {
    this.entries = [];
  }
}

/** `code, params, code, params, …` as recorded. */
export type RecordedOps = readonly unknown[];
