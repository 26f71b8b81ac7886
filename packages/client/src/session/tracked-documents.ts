// The session's unit-of-work state: the identity map (one entity object per id in a session), each
// entity's metadata and change vector, the snapshot taken when it was loaded or saved (what "changed"
// is measured against), pending deletes, and documents that arrived as includes but were not asked for
// yet (a later load of one of them needs no request).
import { clientError } from '../errors.js';
import { isJsonObject } from '../json-object.js';

export type Metadata = Record<string, unknown>;
export type EntityType<T> = abstract new (...args: never[]) => T;

export interface DocumentInfo {
  id: string;
  entity: object;
  metadata: Metadata;
  changeVector: string | null;
  /** The serialised document as last loaded or saved; null for an entity stored in this session. */
  snapshot: string | null;
  /** A change vector the caller gave store() explicitly: sent as the expected one on save. */
  expectedChangeVector?: string | null;
}

/** Ids compare case-insensitively (as on the server), with Unicode's default, locale-independent mapping. */
export const idKey = (id: string): string => id.toLowerCase();

export class TrackedDocuments {
  private readonly byId = new Map<string, DocumentInfo>();
  private readonly byEntity = new Map<object, DocumentInfo>();
  /** Pending deletes by id key, with the change vector to expect (null: no check). */
  readonly deleted = new Map<string, { id: string; changeVector: string | null }>();
  /** Documents received as includes and not yet turned into entities; null: known not to exist. */
  private readonly included = new Map<string, Record<string, unknown> | null>();
  /** Ids the server said do not exist (loading them again needs no request). */
  private readonly missing = new Set<string>();

  constructor(private readonly identityProperty: string | null) {}

  get all(): IterableIterator<DocumentInfo> {
    return this.byEntity.values();
  }

  infoFor(entity: object): DocumentInfo | undefined {
    return this.byEntity.get(entity);
  }

  infoForId(id: string): DocumentInfo | undefined {
    return this.byId.get(idKey(id));
  }

  /** Whether a load of this id needs no request (tracked, deleted, known missing or held as an include). */
  knows(id: string): boolean {
    const key = idKey(id);
    return this.byId.has(key) || this.deleted.has(key) || this.missing.has(key) || this.included.has(key);
  }

  /** An id this session can answer without a request: the entity, or null when known to be absent or deleted. */
  lookup(id: string, documentType?: EntityType<unknown>): { found: true; entity: object | null } | null {
    const key = idKey(id);
    const info = this.byId.get(key);
    if (info !== undefined) return { found: true, entity: info.entity };
    if (this.deleted.has(key) || this.missing.has(key)) return { found: true, entity: null };
    if (this.included.has(key)) {
      const document = this.included.get(key)!;
      this.included.delete(key);
      if (document === null) {
        this.missing.add(key);
        return { found: true, entity: null };
      }
      return { found: true, entity: this.trackLoaded(document, documentType) };
    }
    return null;
  }

  /**
   * The entity for a document the server sent. An id already tracked keeps its entity (and any local
   * change to it): the identity map hands out one object per id.
   */
  trackLoaded(document: Record<string, unknown>, documentType?: EntityType<unknown>): object {
    const metadata = document['@metadata'];
    if (!isJsonObject(metadata) || typeof metadata['@id'] !== 'string') {
      throw clientError('UnexpectedResponse', 'The server sent a document without @metadata.@id');
    }
    const id = metadata['@id'];
    const key = idKey(id);
    const existing = this.byId.get(key);
    if (existing !== undefined) return existing.entity;
    this.missing.delete(key);
    this.included.delete(key);
    const { '@metadata': _metadata, ...body } = document;
    const entity: Record<string, unknown> =
      documentType === undefined ? body : Object.assign(Object.create(documentType.prototype), body);
    if (this.identityProperty !== null) entity[this.identityProperty] = id;
    const info: DocumentInfo = {
      id,
      entity,
      metadata: { ...metadata },
      changeVector: typeof metadata['@change-vector'] === 'string' ? metadata['@change-vector'] : null,
      snapshot: null,
    };
    info.snapshot = this.serialize(info);
    this.add(info);
    return entity;
  }

  trackNew(info: DocumentInfo): void {
    const key = idKey(info.id);
    const existing = this.byId.get(key);
    if (existing !== undefined && existing.entity !== info.entity) {
      throw clientError(
        'InvalidArgument',
        `This session already tracks another object as ${existing.id}: load it and change that object, or use another session`,
      );
    }
    this.deleted.delete(key);
    this.missing.delete(key);
    this.included.delete(key);
    if (this.identityProperty !== null)
      (info.entity as Record<string, unknown>)[this.identityProperty] = info.id;
    this.add(info);
  }

  /** Includes from a load or a query: kept as documents until asked for. */
  addIncludes(includes: Record<string, unknown>): void {
    for (const [id, document] of Object.entries(includes)) this.addInclude(id, document);
  }

  /** One included document (null or not an object: it does not exist), unless the id is tracked already. */
  addInclude(id: string, document: unknown): void {
    const key = idKey(id);
    if (this.byId.has(key)) return;
    this.included.set(key, isJsonObject(document) ? document : null);
  }

  markMissing(id: string): void {
    this.missing.add(idKey(id));
  }

  /** Forgets an entity; with `deleteOnSave`, its document is deleted by the next saveChanges. */
  remove(info: DocumentInfo, deleteOnSave: boolean): void {
    const key = idKey(info.id);
    this.byId.delete(key);
    this.byEntity.delete(info.entity);
    // An entity never saved has nothing on the server to delete.
    if (deleteOnSave && info.snapshot !== null) {
      this.deleted.set(key, { id: info.id, changeVector: info.changeVector });
    }
  }

  clear(): void {
    this.byId.clear();
    this.byEntity.clear();
    this.deleted.clear();
    this.included.clear();
    this.missing.clear();
  }

  /** The document as it would be sent: the entity's fields (less its id property) and its metadata. */
  serialize(info: DocumentInfo): string {
    const entity = info.entity as Record<string, unknown>;
    let fields: Record<string, unknown> = entity;
    if (this.identityProperty !== null && Object.hasOwn(entity, this.identityProperty)) {
      const { [this.identityProperty]: _id, ...rest } = entity;
      fields = rest;
    }
    return JSON.stringify({ ...fields, '@metadata': info.metadata });
  }

  hasChanged(info: DocumentInfo): boolean {
    return info.snapshot === null || this.serialize(info) !== info.snapshot;
  }

  private add(info: DocumentInfo): void {
    this.byId.set(idKey(info.id), info);
    this.byEntity.set(info.entity, info);
  }
}
