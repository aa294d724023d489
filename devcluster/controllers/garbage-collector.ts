// Garbage collector: deletes dependents whose owners are gone (Background), holds owners in
// foreground deletion until blocking dependents are gone, and orphans dependents on request.
import type { Logger } from 'pino';
import { ApiError } from '../api/errors.js';
import { isJsonObject, text, type JsonObject } from '../../shared/kube/json.js';
import type { ApiCore } from '../api/core.js';
import type { ChangeEvent } from '../storage/types.js';
import { WorkQueue } from './queue.js';

/** One ownerReferences entry. */
interface OwnerReference {
  uid: string;
  blockOwnerDeletion: boolean;
}

/** Owner references of an object. */
export function ownerReferencesOf(object: JsonObject): OwnerReference[] {
  const refs = (object['metadata'] as JsonObject)['ownerReferences'];
  if (!Array.isArray(refs)) return [];
  return refs.filter(isJsonObject).map((r) => ({
    uid: text(r['uid'] ?? ''),
    blockOwnerDeletion: r['blockOwnerDeletion'] === true,
  }));
}

function finalizersOf(object: JsonObject): string[] {
  const f = (object['metadata'] as JsonObject)['finalizers'];
  return Array.isArray(f) ? f.filter((x): x is string => typeof x === 'string') : [];
}

/** Splits a storage key ("deployments.apps") into group and resource. */
export function splitStorageKey(key: string): { group: string; resource: string } {
  const dot = key.indexOf('.');
  return dot < 0
    ? { group: '', resource: key }
    : { group: key.slice(dot + 1), resource: key.slice(0, dot) };
}

/** Reference to a stored object: storage key, namespace, name. */
interface ObjectAddress {
  key: string;
  namespace: string;
  name: string;
}

function address(key: string, namespace: string, name: string): string {
  return `${key}|${namespace}|${name}`;
}

function parseAddress(value: string): ObjectAddress {
  const [key = '', namespace = '', name = ''] = value.split('|');
  return { key, namespace, name };
}

/** The in-process garbage collector. */
export class GarbageCollector {
  /** owner uid → dependent addresses. */
  private readonly dependents = new Map<string, Set<string>>();
  private readonly queue: WorkQueue;

  constructor(
    private readonly core: ApiCore,
    logger: Logger,
  ) {
    this.queue = new WorkQueue('garbage-collector', (item) => this.reconcile(item), logger);
  }

  /** Indexes existing objects and starts following changes; returns the stop function. */
  start(): () => void {
    for (const key of this.core.store.keys()) {
      for (const object of this.core.store.list(key)) this.index(key, object, undefined);
    }
    for (const key of this.core.store.keys()) {
      for (const object of this.core.store.list(key)) this.examine(key, object);
    }
    const unsubscribe = this.core.store.subscribe((event) => this.observe(event));
    return () => {
      unsubscribe();
      this.queue.stop();
    };
  }

  private index(key: string, object: JsonObject, previous: JsonObject | undefined): void {
    const refs = ownerReferencesOf(object);
    const previousRefs = previous ? ownerReferencesOf(previous) : [];
    // Most objects have no owners: nothing to index (this runs on every write).
    if (refs.length === 0 && previousRefs.length === 0) return;
    const m = object['metadata'] as JsonObject;
    const addr = address(key, text(m['namespace'] ?? ''), text(m['name']));
    for (const ref of previousRefs) this.dependents.get(ref.uid)?.delete(addr);
    for (const ref of refs) {
      let set = this.dependents.get(ref.uid);
      if (!set) this.dependents.set(ref.uid, (set = new Set()));
      set.add(addr);
    }
  }

  private examine(key: string, object: JsonObject): void {
    const m = object['metadata'] as JsonObject;
    if (m['deletionTimestamp'] === undefined && m['ownerReferences'] === undefined) return;
    const addr = address(key, text(m['namespace'] ?? ''), text(m['name']));
    if (m['deletionTimestamp'] !== undefined) {
      const finalizers = finalizersOf(object);
      if (finalizers.includes('foregroundDeletion')) this.queue.add(`foreground:${addr}`);
      if (finalizers.includes('orphan')) this.queue.add(`orphan:${addr}`);
    }
    for (const ref of ownerReferencesOf(object)) {
      if (!this.core.store.byUid(ref.uid)) this.queue.add(`dependent:${addr}`);
    }
  }

  private observe(event: ChangeEvent): void {
    if (event.type === 'DELETED') {
      const m = event.object['metadata'] as JsonObject;
      const addr = address(event.key, event.namespace, event.name);
      for (const ref of ownerReferencesOf(event.object)) {
        this.dependents.get(ref.uid)?.delete(addr);
        // A dependent going away may unblock an owner in foreground deletion.
        const owner = this.core.store.byUid(ref.uid);
        if (owner) this.queue.add(`foreground:${address(owner.key, owner.namespace, owner.name)}`);
      }
      const uid = text(m['uid'] ?? '');
      for (const dependent of this.dependents.get(uid) ?? [])
        this.queue.add(`dependent:${dependent}`);
      return;
    }
    this.index(event.key, event.object, event.previous);
    this.examine(event.key, event.object);
  }

  private reconcile(item: string): void {
    const colon = item.indexOf(':');
    const kind = item.slice(0, colon);
    const addr = parseAddress(item.slice(colon + 1));
    const object = this.core.store.get(addr.key, addr.namespace, addr.name);
    if (!object) return;
    if (kind === 'dependent') this.collectDependent(addr, object);
    else if (kind === 'foreground') this.foreground(addr, object);
    else if (kind === 'orphan') this.orphan(addr, object);
  }

  private typeOf(key: string) {
    const { group, resource } = splitStorageKey(key);
    return this.core.typeOf(group, resource);
  }

  /** Deletes a dependent whose owners are all gone; drops references to owners that are gone otherwise. */
  private collectDependent(addr: ObjectAddress, object: JsonObject): void {
    const refs = ownerReferencesOf(object);
    if (refs.length === 0) return;
    const alive = refs.filter((r) => this.core.store.byUid(r.uid) !== undefined);
    if (alive.length === refs.length) return;
    const type = this.typeOf(addr.key);
    if (alive.length === 0) {
      if ((object['metadata'] as JsonObject)['deletionTimestamp'] !== undefined) return;
      this.tolerateNotFound(() =>
        this.core.delete(type, addr.namespace, addr.name, {
          propagationPolicy: 'Background',
          dryRun: false,
        }),
      );
      return;
    }
    const copy = structuredClone(object);
    const m = copy['metadata'] as JsonObject;
    const keep = new Set(alive.map((r) => r.uid));
    m['ownerReferences'] = (Array.isArray(m['ownerReferences']) ? m['ownerReferences'] : []).filter(
      (r) => isJsonObject(r) && keep.has(text(r['uid'])),
    );
    this.tolerateNotFound(() =>
      this.core.update(type, addr.namespace, addr.name, copy, {
        dryRun: false,
        fieldManager: 'garbage-collector',
        fieldValidation: 'Ignore',
        warnings: [],
      }),
    );
  }

  private foreground(addr: ObjectAddress, owner: JsonObject): void {
    const m = owner['metadata'] as JsonObject;
    if (m['deletionTimestamp'] === undefined || !finalizersOf(owner).includes('foregroundDeletion'))
      return;
    const uid = text(m['uid']);
    let blocking = 0;
    for (const dependent of [...(this.dependents.get(uid) ?? [])]) {
      const d = parseAddress(dependent);
      const object = this.core.store.get(d.key, d.namespace, d.name);
      if (!object) continue;
      const ref = ownerReferencesOf(object).find((r) => r.uid === uid);
      if (!ref) continue;
      if (ref.blockOwnerDeletion) blocking++;
      if ((object['metadata'] as JsonObject)['deletionTimestamp'] === undefined) {
        this.tolerateNotFound(() =>
          this.core.delete(this.typeOf(d.key), d.namespace, d.name, {
            propagationPolicy: 'Foreground',
            dryRun: false,
          }),
        );
      }
    }
    if (blocking === 0)
      this.core.removeFinalizer(
        this.typeOf(addr.key),
        addr.namespace,
        addr.name,
        'foregroundDeletion',
      );
  }

  private orphan(addr: ObjectAddress, owner: JsonObject): void {
    const m = owner['metadata'] as JsonObject;
    if (m['deletionTimestamp'] === undefined || !finalizersOf(owner).includes('orphan')) return;
    const uid = text(m['uid']);
    for (const dependent of [...(this.dependents.get(uid) ?? [])]) {
      const d = parseAddress(dependent);
      const object = this.core.store.get(d.key, d.namespace, d.name);
      if (!object) continue;
      const copy = structuredClone(object);
      const cm = copy['metadata'] as JsonObject;
      const refs = Array.isArray(cm['ownerReferences']) ? cm['ownerReferences'] : [];
      const kept = refs.filter((r) => !(isJsonObject(r) && r['uid'] === uid));
      if (kept.length > 0) cm['ownerReferences'] = kept;
      else delete cm['ownerReferences'];
      this.tolerateNotFound(() =>
        this.core.update(this.typeOf(d.key), d.namespace, d.name, copy, {
          dryRun: false,
          fieldManager: 'garbage-collector',
          fieldValidation: 'Ignore',
          warnings: [],
        }),
      );
    }
    this.core.removeFinalizer(this.typeOf(addr.key), addr.namespace, addr.name, 'orphan');
  }

  private tolerateNotFound(action: () => unknown): void {
    try {
      action();
    } catch (error) {
      if (error instanceof ApiError && error.reason === 'NotFound') return;
      throw error;
    }
  }
}
