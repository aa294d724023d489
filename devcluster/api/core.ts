// The API server's semantics, independent of HTTP: create, read, update, patch and delete. Each
// write runs the steps of its own modules — metadata rules (metadata.ts), namespace lifecycle,
// schema validation and defaulting (validation.ts), the status subresource (subresources.ts),
// field ownership (managed-fields.ts), patching (patching.ts), deletion and finalizers
// (deletion.ts) — over objects kept by type in the store (resource-store.ts). The HTTP front end
// and the in-process controllers both call this.
import { randomUUID } from 'node:crypto';
import { stringItems, text, type JsonObject } from '../../shared/kube/json.js';
import type { FieldSelector, LabelSelector } from '../../shared/kube/selectors.js';
import { establishedStatus, initializeCrd, resourceTypesOfCrd } from '../resources/crds.js';
import type { ResourceRegistry } from '../resources/registry.js';
import {
  defaultObject,
  strategyContext,
  strategyOf,
  type StrategyContext,
} from '../resources/strategies.js';
import type { ResourceType } from '../resources/types.js';
import type { ObjectStore } from '../storage/store.js';
import { checkPreconditions, markedForDeletion, needsMark, readyToRemove } from './deletion.js';
import {
  alreadyExists,
  ApiError,
  badRequest,
  conflict,
  invalid,
  notFound,
  refOf,
  staleObjectMessage,
} from './errors.js';
import { listObjects, matchesSelectors } from './listing.js';
import { MergeRulesCache, recordWrite } from './managed-fields.js';
import {
  checkNoFinalizersAdded,
  checkTypeMeta,
  clearServerFields,
  keepServerFields,
  nameNewObject,
  nextGeneration,
  placeObject,
  rfc3339,
  validateMetadata,
} from './metadata.js';
import { checkNamespaceOpen } from './namespace-lifecycle.js';
import { clone, metadataOf, sameButBookkeeping } from './object-json.js';
import { decodePatch, patchedObject, patchFailure } from './patching.js';
import { present, ResourceStore, storedForm } from './resource-store.js';
import { dropStatusOnCreate, keepStoredStatus, subresourceWrite } from './subresources.js';
import type {
  Admission,
  ConflictInjector,
  CoreOptions,
  DeleteOptions,
  ListOptions,
  ListResult,
  PatchType,
  WriteOptions,
} from './types.js';
import { applySchema, validateBuiltin } from './validation.js';

function isCrdType(type: ResourceType): boolean {
  return type.group === 'apiextensions.k8s.io' && type.kind === 'CustomResourceDefinition';
}

/** The API server core. */
export class ApiCore {
  readonly store: ObjectStore;
  readonly registry: ResourceRegistry;
  private readonly objects: ResourceStore;
  private readonly now: () => Date;
  private readonly faults: ConflictInjector | undefined;
  private readonly admission: Admission | undefined;
  private readonly mergeRules = new MergeRulesCache();
  private readonly strategyContext: StrategyContext;

  constructor(options: CoreOptions) {
    this.store = options.store;
    this.objects = new ResourceStore(options.store);
    this.registry = options.registry;
    this.now = options.now ?? (() => new Date());
    this.faults = options.faults;
    this.admission = options.admission;
    this.strategyContext = strategyContext({
      services: () => options.store.list('services'),
      serviceIPFamilies: options.serviceIPFamilies ?? ['IPv4'],
    });
  }

  /** Current time as metav1.Time. */
  timestamp(): string {
    return rfc3339(this.now());
  }

  /** The type served for group/resource at its storage version (for controllers). */
  typeOf(group: string, resource: string): ResourceType {
    const type = this.registry.atStorageVersion(group, resource);
    if (type !== undefined) return type;
    throw new ApiError(
      'NotFound',
      `the server could not find the requested resource (${resource}.${group})`,
    );
  }

  /** An object as served at the type's version (CRD versions share storage; conversion None). */
  present(type: ResourceType, object: JsonObject): JsonObject {
    return present(type, object);
  }

  /** Reads one object. */
  get(type: ResourceType, namespace: string, name: string): JsonObject {
    const object = this.objects.stored(type, namespace, name);
    if (!object) throw notFound(refOf(type, name));
    return present(type, object);
  }

  /** Reads one object or undefined. */
  find(type: ResourceType, namespace: string, name: string): JsonObject | undefined {
    const object = this.objects.stored(type, namespace, name);
    return object && present(type, object);
  }

  /** Whether an object matches label and field selectors. */
  matches(object: JsonObject, labels: LabelSelector, fields: FieldSelector): boolean {
    return matchesSelectors(object, labels, fields);
  }

  /** Lists objects (namespace undefined = all namespaces) with selectors and limit/continue. */
  list(type: ResourceType, namespace: string | undefined, options: ListOptions): ListResult {
    return listObjects(this.objects, type, namespace, options);
  }

  /** Creates an object (POST). `body` must be a fresh object the core may keep. */
  create(
    type: ResourceType,
    namespace: string,
    body: JsonObject,
    options: WriteOptions,
    managedFieldsDone = false,
  ): JsonObject {
    checkTypeMeta(type, body);
    const metadata = metadataOf(body);
    const name = nameNewObject(type, namespace, metadata);
    validateMetadata(type, metadata, name);
    checkNamespaceOpen(this.store, type, namespace, name);
    if (this.objects.stored(type, namespace, name)) throw alreadyExists(refOf(type, name));
    clearServerFields(metadata);
    dropStatusOnCreate(type, body);
    let object = body;
    defaultObject(type.group, type.kind, object);
    const allocation = strategyOf(type.group, type.kind).prepareCreate?.(
      object,
      this.strategyContext,
    );
    if (allocation && allocation.length > 0) throw invalid(refOf(type, name), allocation);
    object = applySchema(type, object, options, name);
    validateBuiltin(type, object, name);
    const now = this.timestamp();
    const m = metadataOf(object);
    // A strategy may have set the uid (a Job's generated selector carries it).
    if (typeof m['uid'] !== 'string') m['uid'] = randomUUID();
    m['creationTimestamp'] = now;
    if (type.hasGeneration) m['generation'] = 1;
    if (isCrdType(type)) initializeCrd(object, now);
    if (!managedFieldsDone) {
      const rules = this.mergeRules.of(type);
      object = recordWrite(type, rules, undefined, object, options, '', this.timestamp());
    }
    object = storedForm(type, object);
    if (options.user !== undefined) this.admission?.(type, object, options.user);
    if (options.dryRun) return present(type, object);
    return this.stored(type, this.objects.put(type, object));
  }

  // The answer of a stored write; a CRD's types are (re-)served at once.
  private stored(type: ResourceType, object: JsonObject): JsonObject {
    if (isCrdType(type)) this.serveCrd(object);
    return present(type, object);
  }

  /** Registers (or re-registers) the types a CRD serves. */
  serveCrd(crd: JsonObject): void {
    const name = text((crd['metadata'] as JsonObject)['name']);
    this.registry.removeCrd(name);
    for (const type of resourceTypesOfCrd(crd)) {
      this.registry.add(type);
    }
    this.mergeRules.forgetCrd(name);
  }

  /** Replaces an object (PUT), on the main resource or the status subresource. */
  update(
    type: ResourceType,
    namespace: string,
    name: string,
    body: JsonObject,
    options: WriteOptions,
    subresource = '',
  ): JsonObject {
    const existing = this.objects.stored(type, namespace, name);
    if (!existing) throw notFound(refOf(type, name));
    checkTypeMeta(type, body);
    const metadata = metadataOf(body);
    if (metadata['name'] !== undefined && metadata['name'] !== name) {
      throw badRequest(
        `the name of the object (${text(metadata['name'])}) does not match the name on the URL (${name})`,
      );
    }
    if (
      type.namespaced &&
      metadata['namespace'] !== undefined &&
      metadata['namespace'] !== namespace
    ) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    return this.replace(type, existing, body, options, subresource, false);
  }

  /** Common update path: preconditions, subresource rules, metadata rules, no-op detection, finalization. */
  private replace(
    type: ResourceType,
    existing: JsonObject,
    body: JsonObject,
    options: WriteOptions,
    subresource: string,
    managedFieldsDone: boolean,
  ): JsonObject {
    const oldMeta = existing['metadata'] as JsonObject;
    const name = text(oldMeta['name']);
    const namespace = text(oldMeta['namespace'] ?? '');
    const requestedRv = metadataOf(body)['resourceVersion'];
    if (
      requestedRv !== undefined &&
      requestedRv !== '' &&
      requestedRv !== oldMeta['resourceVersion']
    ) {
      throw conflict(refOf(type, name), staleObjectMessage);
    }
    if (this.faults?.takeConflict(this.objects.key(type), namespace, name)) {
      throw conflict(refOf(type, name), staleObjectMessage);
    }
    const presentedOld = present(type, existing);
    let object = subresourceWrite(subresource, presentedOld, body);
    if (object === undefined) {
      object = body;
      const m = metadataOf(object);
      keepServerFields(m, oldMeta);
      placeObject(type, m, namespace);
      m['name'] = name;
      if (m['managedFields'] === undefined && oldMeta['managedFields'] !== undefined)
        m['managedFields'] = oldMeta['managedFields'];
      keepStoredStatus(type, object, presentedOld);
      validateMetadata(type, m, name);
      defaultObject(type.group, type.kind, object);
      const strategy = strategyOf(type.group, type.kind);
      const allocation = strategy.prepareUpdate?.(object, presentedOld, this.strategyContext);
      if (allocation && allocation.length > 0) throw invalid(refOf(type, name), allocation);
      object = applySchema(type, object, options, name);
      validateBuiltin(type, object, name, presentedOld);
      if (isCrdType(type))
        object['status'] = establishedStatus(object, presentedOld['status'], this.timestamp());
      checkNoFinalizersAdded(type, name, oldMeta, m);
    }
    const m = metadataOf(object);
    m['resourceVersion'] = oldMeta['resourceVersion'] ?? '';
    if (type.hasGeneration) m['generation'] = nextGeneration(type, object, presentedOld, oldMeta);
    if (!managedFieldsDone) {
      const rules = this.mergeRules.of(type);
      const now = this.timestamp();
      object = recordWrite(type, rules, presentedOld, object, options, subresource, now);
    }
    // A write that changes nothing (ignoring managedFields timestamps) is a no-op, as in kube.
    if (sameButBookkeeping(object, presentedOld)) return presentedOld;
    object = storedForm(type, object);
    if (options.user !== undefined && subresource === '')
      this.admission?.(type, object, options.user);
    if (options.dryRun) return present(type, object);
    if (readyToRemove(type, object))
      return present(type, this.objects.remove(type, namespace, name) ?? object);
    return this.stored(type, this.objects.put(type, object));
  }

  /** Applies a PATCH of the given type; server-side apply creates the object when missing. */
  patch(
    type: ResourceType,
    namespace: string,
    name: string,
    patchType: PatchType,
    raw: string,
    options: WriteOptions & { force: boolean },
    subresource = '',
  ): JsonObject {
    const existing = this.objects.stored(type, namespace, name);
    const patch = decodePatch(patchType, raw);
    try {
      const patched = patchedObject({
        type,
        name,
        presented: existing && present(type, existing),
        patchType,
        patch,
        options,
        subresource,
        rules: () => this.mergeRules.of(type),
        now: () => this.timestamp(),
      });
      if ('create' in patched) return this.create(type, namespace, patched.create, options, true);
      const done = patched.managedFieldsDone;
      // PATCH /status keeps everything but status, with the precondition of the patch if any.
      return this.replace(
        type,
        existing as JsonObject,
        patched.replace,
        options,
        subresource,
        done,
      );
    } catch (error) {
      throw patchFailure(error);
    }
  }

  /**
   * Deletes an object: immediately when nothing holds it, otherwise marks it with
   * deletionTimestamp (finalizers, Foreground/Orphan propagation, namespaces). Returns the
   * object and whether it is gone.
   */
  delete(
    type: ResourceType,
    namespace: string,
    name: string,
    options: DeleteOptions,
  ): { object: JsonObject; deleted: boolean } {
    const ns = this.objects.scope(type, namespace);
    const existing = this.objects.stored(type, ns, name);
    if (!existing) throw notFound(refOf(type, name));
    checkPreconditions(type, name, existing['metadata'] as JsonObject, options);
    if (this.faults?.takeConflict(this.objects.key(type), ns, name))
      throw conflict(refOf(type, name), staleObjectMessage);
    if (!needsMark(type, existing['metadata'] as JsonObject, options)) {
      if (options.dryRun) return { object: present(type, existing), deleted: true };
      const removed = this.objects.remove(type, ns, name) ?? existing;
      return { object: present(type, removed), deleted: true };
    }
    const marked = markedForDeletion(type, present(type, existing), options, () =>
      this.timestamp(),
    );
    if (marked === undefined) return { object: present(type, existing), deleted: false };
    const object = storedForm(type, marked);
    if (options.dryRun) return { object: present(type, object), deleted: false };
    if (readyToRemove(type, object)) {
      const removed = this.objects.remove(type, ns, name) ?? object;
      return { object: present(type, removed), deleted: true };
    }
    return { object: present(type, this.objects.put(type, object)), deleted: false };
  }

  /**
   * Removes a finalizer from an object (controllers): re-reads and retries internally since
   * the core is single-threaded, so no conflict can intervene.
   */
  removeFinalizer(type: ResourceType, namespace: string, name: string, finalizer: string): void {
    const existing = this.find(type, namespace, name);
    if (!existing) return;
    const m = existing['metadata'] as JsonObject;
    const finalizers = stringItems(m['finalizers']);
    if (!finalizers.includes(finalizer)) return;
    const object = clone(existing);
    metadataOf(object)['finalizers'] = finalizers.filter((f) => f !== finalizer);
    const stored = this.objects.stored(type, namespace, name) ?? existing;
    this.replace(type, stored, object, systemWrite(), '', false);
  }
}

/** Write options for the server's own controllers. */
export function systemWrite(manager = 'devcluster'): WriteOptions {
  return { dryRun: false, fieldManager: manager, fieldValidation: 'Ignore', warnings: [] };
}
