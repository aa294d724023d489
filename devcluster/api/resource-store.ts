// The object store as the API sees it: objects by served type. All versions of a resource share
// one storage key; cluster-scoped objects are kept under namespace ""; objects are stored at the
// storage version and presented at the version a request names (CRD conversion None).
import { isJsonObject, type JsonObject } from '../../shared/kube/json.js';
import { applyDefaults } from '../../shared/kube/schema/index.js';
import { apiVersionOf, typeStorageKey } from '../resources/registry.js';
import type { ResourceType } from '../resources/types.js';
import { memoized } from '../storage/memo.js';
import type { ObjectStore } from '../storage/store.js';

/**
 * An object as served at the type's version: converted when the version has a conversion,
 * otherwise only relabelled (CRD versions share storage; conversion None). Custom objects get
 * their version's schema defaults, as kube-apiserver defaults what it reads from etcd: an object
 * stored before its CRD gained a default shows it (the same object when nothing is missing).
 */
export function present(type: ResourceType, object: JsonObject): JsonObject {
  if (type.conversion) return type.conversion.fromStorage(object);
  const apiVersion = apiVersionOf(type.group, type.version);
  const relabelled = object['apiVersion'] === apiVersion ? object : { ...object, apiVersion };
  return withReadDefaults(type, relabelled);
}

/**
 * A custom object with its version's schema defaults applied; other objects as they are.
 * Kept on the stored object per schema: a write's response, its watch events, the next update's
 * read and every list would otherwise walk the object again (a tenth of the devcluster's CPU at
 * 10,000 namespaces). A changed CRD schema is a new schema object, so it defaults afresh.
 */
export function withReadDefaults(type: ResourceType, object: JsonObject): JsonObject {
  const schema = type.schema;
  if (type.crdName === undefined || schema === undefined) return object;
  return memoized(object, readDefaultsSlot(schema), (stored) => {
    const defaulted = applyDefaults(stored, schema);
    return isJsonObject(defaulted) ? defaulted : stored;
  });
}

const readDefaultsSlots = new WeakMap<JsonObject, symbol>();

/** One memo slot per schema object, so objects read under an older schema are not trusted. */
function readDefaultsSlot(schema: JsonObject): symbol {
  let slot = readDefaultsSlots.get(schema);
  if (slot === undefined) {
    slot = Symbol('readDefaults');
    readDefaultsSlots.set(schema, slot);
  }
  return slot;
}

/** An object of the type's version in the form it is stored in. */
export function storedForm(type: ResourceType, object: JsonObject): JsonObject {
  if (type.conversion) return type.conversion.toStorage(object);
  object['apiVersion'] = apiVersionOf(type.group, type.storageVersion);
  return object;
}

/** Reads and writes of stored objects by type. */
export class ResourceStore {
  constructor(readonly store: ObjectStore) {}

  /** The storage key of a type's resource. */
  key(type: ResourceType): string {
    return typeStorageKey(type);
  }

  /** The namespace an object of the type is stored under ("" when cluster-scoped). */
  scope(type: ResourceType, namespace: string): string {
    return type.namespaced ? namespace : '';
  }

  /** The stored object (at the storage version), or undefined. */
  stored(type: ResourceType, namespace: string, name: string): JsonObject | undefined {
    return this.store.get(this.key(type), this.scope(type, namespace), name);
  }

  /** Stored objects in namespace/name order (undefined namespace = all; ignored when cluster-scoped). */
  list(type: ResourceType, namespace: string | undefined): JsonObject[] {
    return this.store.list(this.key(type), type.namespaced ? namespace : undefined);
  }

  /** Stores a fresh object (it gets the next resourceVersion). */
  put(type: ResourceType, object: JsonObject): JsonObject {
    return this.store.put(this.key(type), object);
  }

  /** Removes an object; its last state with the deletion's resourceVersion, or undefined. */
  remove(type: ResourceType, namespace: string, name: string): JsonObject | undefined {
    return this.store.remove(this.key(type), this.scope(type, namespace), name);
  }
}
