// The API server's semantics, independent of HTTP: create, read, update, patch and delete with
// kube's metadata rules, status subresources, CRD schemas, finalizers and namespace lifecycle.
// The HTTP front end and the in-process controllers both call this.
import { randomUUID } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  invalid,
  notFound,
  staleObjectMessage,
  type ResourceRef,
} from './errors.js';
import type { StatusCause } from '../../shared/kube/status.js';
import {
  copyJson,
  isJsonObject,
  stringItems,
  text,
  type JsonObject,
  type JsonValue,
} from '../../shared/kube/json.js';
import { unknownBuiltinFields, unknownMetadataFields } from '../resources/known-fields.js';
import { nameFromGenerateName, nameRuleOf, validateName } from '../resources/names.js';
import {
  ApplyConflictError,
  PatchError,
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  builtinMergeRules,
  mergeRulesFromSchema,
  recordUpdate,
  serverSideApply,
  type MergeRules,
} from '../patch/index.js';
import { apiVersionOf, storageKey, type ResourceRegistry } from '../resources/registry.js';
import type { ResourceType } from '../resources/types.js';
import {
  applyDefaults,
  prune,
  validateAgainstSchema,
  validateCustomResourceDefinition,
} from '../../shared/kube/schema/index.js';
import type { ObjectStore } from '../storage/store.js';
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
import { strategyOf, type StrategyContext } from '../resources/strategies.js';
import { crdCleanupFinalizer, establishedStatus, resourceTypesOfCrd } from '../resources/crds.js';
import {
  isValidLabelKey,
  isValidLabelValue,
  matchesFieldSelector,
  matchesLabelSelector,
  type FieldSelector,
  type LabelSelector,
} from '../../shared/kube/selectors.js';

/** RFC 3339 time without fractions, as metav1.Time serialises. */
export function rfc3339(date: Date): string {
  const second = Math.floor(date.getTime() / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    lastStamp = `${date.toISOString().slice(0, 19)}Z`;
  }
  return lastStamp;
}

// Formatting dates is a visible cost at thousands of writes per second: reuse it per second.
let lastSecond = Number.NaN;
let lastStamp = '';

function meta(object: JsonObject): JsonObject {
  const value = object['metadata'];
  if (isJsonObject(value)) return value;
  const fresh: JsonObject = {};
  object['metadata'] = fresh;
  return fresh;
}

/** Deep structural equality of JSON values (key order ignored). */
export function jsonEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (!(k in b) || !jsonEqual(a[k], b[k])) return false;
  return true;
}

/** Whether two objects are equal as JSON when the keys in `skip` are left out of both. */
function jsonEqualExcept(a: JsonObject, b: JsonObject, skip: readonly string[]): boolean {
  let counted = 0;
  for (const k in a) {
    if (!Object.hasOwn(a, k) || skip.includes(k)) continue;
    counted++;
    if (!(k in b) || !jsonEqual(a[k], b[k])) return false;
  }
  for (const k in b) if (Object.hasOwn(b, k) && !skip.includes(k)) counted--;
  return counted === 0;
}

/**
 * Whether two versions of an object differ only in bookkeeping: metadata.resourceVersion and
 * the times of managedFields entries (compared without building copies: this runs every write).
 */
function sameButBookkeeping(a: JsonObject, b: JsonObject): boolean {
  if (!jsonEqualExcept(a, b, ['metadata'])) return false;
  const ma = meta(a);
  const mb = meta(b);
  if (!jsonEqualExcept(ma, mb, ['resourceVersion', 'managedFields'])) return false;
  const fa = ma['managedFields'];
  const fb = mb['managedFields'];
  if (!Array.isArray(fa) || !Array.isArray(fb)) return Array.isArray(fa) === Array.isArray(fb);
  if (fa.length !== fb.length) return false;
  for (let i = 0; i < fa.length; i++) {
    const x = fa[i];
    const y = fb[i];
    const same =
      isJsonObject(x) && isJsonObject(y) ? jsonEqualExcept(x, y, ['time']) : jsonEqual(x, y);
    if (!same) return false;
  }
  return true;
}

function withoutKeys(object: JsonObject, keys: readonly string[]): JsonObject {
  const copy: JsonObject = { ...object };
  for (const k of keys) delete copy[k];
  return copy;
}

function clone<T extends JsonValue>(value: T): T {
  return copyJson(value);
}

/**
 * A deep copy of an object to build a write on, except metadata.managedFields, which it shares
 * with `object`: the field manager replaces that list whole and never changes it in place, and a
 * shared list is recognised as unchanged without comparing it (it is most of a small object).
 * Key order is kept, so the written object serialises as the copied one did.
 */
function writableCopy(value: JsonValue): JsonValue {
  if (!isJsonObject(value) || !isJsonObject(value['metadata'])) return clone(value);
  const metadata = value['metadata'];
  const out: JsonObject = {};
  for (const key in value) {
    const child = value[key];
    if (child === undefined || !Object.hasOwn(value, key)) continue;
    out[key] = key === 'metadata' ? {} : clone(child);
  }
  const metadataCopy = out['metadata'] as JsonObject;
  for (const key in metadata) {
    const child = metadata[key];
    if (child === undefined || !Object.hasOwn(metadata, key)) continue;
    metadataCopy[key] = key === 'managedFields' ? child : clone(child);
  }
  return out;
}

/** The value of a field-selector field of an object ("metadata.name", "involvedObject.kind", ...). */
export function fieldValueOf(object: JsonObject, field: string): string | undefined {
  let current: JsonValue | undefined = object;
  for (const part of field.split('.')) {
    if (!isJsonObject(current)) return undefined;
    current = current[part];
  }
  if (current === undefined || current === null) return undefined;
  return typeof current === 'string' ? current : JSON.stringify(current);
}

const supportedFieldSelectors: Record<string, readonly string[]> = {
  '/events': [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
  '/pods': [
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'status.phase',
    'status.podIP',
  ],
  '/secrets': ['type'],
  '/namespaces': ['status.phase'],
};

/** Throws 400 when a field selector names a field the resource cannot be selected by. */
export function checkFieldSelector(type: ResourceType, selector: FieldSelector): void {
  const extra = supportedFieldSelectors[`${type.group}/${type.resource}`] ?? [];
  for (const requirement of selector) {
    if (requirement.field === 'metadata.name' || requirement.field === 'metadata.namespace')
      continue;
    if (extra.includes(requirement.field)) continue;
    throw badRequest(`field label not supported: ${requirement.field}`);
  }
}

/** Causes for malformed metadata.ownerReferences (empty fields, more than one controller). */
function ownerReferenceCauses(value: JsonValue | undefined): StatusCause[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    return [
      {
        type: 'FieldValueInvalid',
        field: 'metadata.ownerReferences',
        message: 'Invalid value: must be a list',
      },
    ];
  }
  const causes: StatusCause[] = [];
  const required: [string, string][] = [
    ['apiVersion', 'version must not be empty'],
    ['kind', 'kind must not be empty'],
    ['name', 'name must not be empty'],
    ['uid', 'uid must not be empty'],
  ];
  let controllers = 0;
  for (const ref of value) {
    const entry = isJsonObject(ref) ? ref : {};
    for (const [field, message] of required) {
      if (typeof entry[field] !== 'string' || entry[field] === '') {
        causes.push({
          type: 'FieldValueInvalid',
          field: `metadata.ownerReferences.${field}`,
          message: `Invalid value: "": ${message}`,
        });
      }
    }
    if (entry['controller'] === true) controllers++;
  }
  if (controllers > 1) {
    causes.push({
      type: 'FieldValueInvalid',
      field: 'metadata.ownerReferences',
      message: 'Invalid value: Only one reference can have Controller set to true',
    });
  }
  return causes;
}

interface ContinueToken {
  rv: number;
  start: string;
}

/** The API server core. */
export class ApiCore {
  readonly store: ObjectStore;
  readonly registry: ResourceRegistry;
  private readonly now: () => Date;
  private readonly faults: ConflictInjector | undefined;
  private readonly admission: Admission | undefined;
  private readonly rulesCache = new Map<ResourceType, MergeRules>();
  private nextServiceIp = 10;
  private readonly strategyContext: StrategyContext;

  constructor(options: CoreOptions) {
    this.store = options.store;
    this.registry = options.registry;
    this.now = options.now ?? (() => new Date());
    this.faults = options.faults;
    this.admission = options.admission;
    this.strategyContext = {
      allocateClusterIP: () => {
        const n = this.nextServiceIp++;
        return `10.96.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
      },
    };
  }

  /** Current time as metav1.Time. */
  timestamp(): string {
    return rfc3339(this.now());
  }

  /** The type served for group/resource at its storage version (for controllers). */
  typeOf(group: string, resource: string): ResourceType {
    for (const type of this.registry.all()) {
      if (
        type.group === group &&
        type.resource === resource &&
        type.version === type.storageVersion
      )
        return type;
    }
    for (const type of this.registry.all())
      if (type.group === group && type.resource === resource) return type;
    throw new ApiError(
      'NotFound',
      `the server could not find the requested resource (${resource}.${group})`,
    );
  }

  private ref(type: ResourceType, name: string): ResourceRef {
    return { group: type.group, resource: type.resource, kind: type.kind, name };
  }

  private key(type: ResourceType): string {
    return storageKey(type.group, type.resource);
  }

  /** An object as served at the type's version (CRD versions share storage; conversion None). */
  present(type: ResourceType, object: JsonObject): JsonObject {
    const apiVersion = apiVersionOf(type.group, type.version);
    return object['apiVersion'] === apiVersion ? object : { ...object, apiVersion };
  }

  private mergeRules(type: ResourceType): MergeRules {
    let rules = this.rulesCache.get(type);
    if (!rules) {
      rules =
        type.schema !== undefined
          ? mergeRulesFromSchema(type.schema)
          : builtinMergeRules(type.group, type.kind);
      this.rulesCache.set(type, rules);
    }
    return rules;
  }

  /** Reads one object. */
  get(type: ResourceType, namespace: string, name: string): JsonObject {
    const object = this.store.get(this.key(type), type.namespaced ? namespace : '', name);
    if (!object) throw notFound(this.ref(type, name));
    return this.present(type, object);
  }

  /** Reads one object or undefined. */
  find(type: ResourceType, namespace: string, name: string): JsonObject | undefined {
    const object = this.store.get(this.key(type), type.namespaced ? namespace : '', name);
    return object && this.present(type, object);
  }

  /** Whether an object matches label and field selectors. */
  matches(object: JsonObject, labels: LabelSelector, fields: FieldSelector): boolean {
    const metadata = object['metadata'] as JsonObject;
    if (
      labels.length > 0 &&
      !matchesLabelSelector(labels, metadata['labels'] as Record<string, string> | undefined)
    ) {
      return false;
    }
    return fields.length === 0 || matchesFieldSelector(fields, (f) => fieldValueOf(object, f));
  }

  /** Lists objects (namespace undefined = all namespaces) with selectors and limit/continue. */
  list(type: ResourceType, namespace: string | undefined, options: ListOptions): ListResult {
    checkFieldSelector(type, options.fieldSelector);
    let rv = this.store.currentResourceVersion();
    let start = '';
    if (options.continueToken) {
      const token = this.decodeContinue(options.continueToken);
      if (this.store.isExpired(token.rv)) {
        throw new ApiError(
          'Expired',
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
        );
      }
      rv = token.rv;
      start = token.start;
    }
    const all = this.store.list(this.key(type), type.namespaced ? namespace : undefined);
    const items: JsonObject[] = [];
    let continueToken: string | undefined;
    let remaining = 0;
    for (const object of all) {
      const metadata = object['metadata'] as JsonObject;
      const position = `${text(metadata['namespace'] ?? '')}/${text(metadata['name'])}`;
      if (start !== '' && position <= start) continue;
      if (!this.matches(object, options.labelSelector, options.fieldSelector)) continue;
      if (options.limit !== undefined && options.limit > 0 && items.length >= options.limit) {
        if (continueToken === undefined) {
          const last = items[items.length - 1]?.['metadata'] as JsonObject;
          continueToken = Buffer.from(
            JSON.stringify({
              rv,
              start: `${text(last['namespace'] ?? '')}/${text(last['name'])}`,
            }),
          ).toString('base64url');
        }
        remaining++;
        continue;
      }
      items.push(this.present(type, object));
    }
    return {
      items,
      resourceVersion: text(rv),
      continueToken,
      remainingItemCount:
        continueToken !== undefined &&
        options.labelSelector.length === 0 &&
        options.fieldSelector.length === 0
          ? remaining
          : undefined,
    };
  }

  private decodeContinue(token: string): ContinueToken {
    try {
      const parsed: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
      if (isJsonObject(parsed)) {
        const { rv, start } = parsed;
        if (typeof rv === 'number' && typeof start === 'string') return { rv, start };
      }
    } catch {
      // fall through to the error below
    }
    throw badRequest('continue key is not valid: illegal base64 data at input byte 0');
  }

  private checkNamespace(type: ResourceType, namespace: string, name: string): void {
    if (!type.namespaced) return;
    const ns = this.store.get('namespaces', '', namespace);
    if (!ns)
      throw notFound({ group: '', resource: 'namespaces', kind: 'Namespace', name: namespace });
    if ((ns['metadata'] as JsonObject)['deletionTimestamp'] !== undefined) {
      const message = `unable to create new content in namespace ${namespace} because it is being terminated`;
      throw new ApiError(
        'Forbidden',
        `${type.group === '' ? type.resource : `${type.resource}.${type.group}`} "${name}" is forbidden: ${message}`,
        {
          name,
          group: type.group,
          kind: type.resource,
          causes: [{ type: 'NamespaceTerminating', field: 'metadata.namespace', message }],
        },
      );
    }
  }

  /** Normalises apiVersion/kind of a request body against the endpoint's type. */
  private checkTypeMeta(type: ResourceType, body: JsonObject): void {
    const apiVersion = apiVersionOf(type.group, type.version);
    if (body['apiVersion'] !== undefined && body['apiVersion'] !== apiVersion) {
      throw badRequest(
        `the API version in the data (${text(body['apiVersion'])}) does not match the expected API version (${apiVersion})`,
      );
    }
    if (body['kind'] !== undefined && body['kind'] !== type.kind) {
      throw badRequest(
        `the kind in the data (${text(body['kind'])}) does not match the expected kind (${type.kind})`,
      );
    }
    body['apiVersion'] = apiVersion;
    body['kind'] = type.kind;
  }

  /**
   * Custom objects: prune unknown fields (reporting them per fieldValidation), default, then
   * validate against the version's schema.
   */
  private applySchema(
    type: ResourceType,
    object: JsonObject,
    options: WriteOptions,
    name: string,
  ): JsonObject {
    const schema = type.schema;
    if (schema === undefined) {
      this.reportUnknownFields(type, unknownBuiltinFields(type.group, type.kind, object), options);
      return object;
    }
    const { apiVersion, kind, metadata, ...content } = object;
    const pruned = prune(content, schema);
    this.reportUnknownFields(
      type,
      [...unknownMetadataFields(metadata), ...pruned.unknownFields],
      options,
    );
    const defaulted = applyDefaults(pruned.value, schema);
    const result: JsonObject = {
      apiVersion: apiVersion ?? null,
      kind: kind ?? null,
      metadata: metadata ?? {},
      ...(isJsonObject(defaulted) ? defaulted : {}),
    };
    const causes = validateAgainstSchema(
      { ...result, metadata: withoutKeys(metadata as JsonObject, ['managedFields']) },
      schema,
    );
    if (causes.length > 0) throw invalid(this.ref(type, name), causes);
    return result;
  }

  /** Unknown fields fail the request (Strict), become warnings (Warn) or pass silently (Ignore). */
  private reportUnknownFields(
    type: ResourceType,
    unknown: readonly string[],
    options: WriteOptions,
  ): void {
    if (unknown.length === 0) return;
    if (options.fieldValidation === 'Strict') {
      const list = unknown.map((f) => `unknown field "${f}"`).join(', ');
      throw badRequest(
        `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: strict decoding error: ${list}`,
      );
    }
    if (options.fieldValidation === 'Warn') {
      for (const f of unknown) options.warnings.push(`unknown field "${f}"`);
    }
  }

  private validateBuiltin(type: ResourceType, object: JsonObject, name: string): void {
    if (type.crdName !== undefined) return;
    const causes: StatusCause[] = [];
    if (type.group === 'apiextensions.k8s.io' && type.kind === 'CustomResourceDefinition') {
      causes.push(...validateCustomResourceDefinition(object));
    }
    const strategy = strategyOf(type.group, type.kind);
    if (strategy.validate) causes.push(...strategy.validate(object));
    if (causes.length > 0) throw invalid(this.ref(type, name), causes);
  }

  private validateMetadata(type: ResourceType, metadata: JsonObject, name: string): void {
    const causes: StatusCause[] = [...validateName(name, nameRuleOf(type.group, type.kind))];
    const labels = metadata['labels'];
    if (labels !== undefined && labels !== null && !isJsonObject(labels)) {
      causes.push({
        type: 'FieldValueInvalid',
        field: 'metadata.labels',
        message: 'Invalid value: must be a map of strings',
      });
    } else if (isJsonObject(labels)) {
      for (const [key, value] of Object.entries(labels)) {
        if (!isValidLabelKey(key)) {
          causes.push({
            type: 'FieldValueInvalid',
            field: 'metadata.labels',
            message: `Invalid value: ${JSON.stringify(key)}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
          });
        } else if (typeof value !== 'string' || !isValidLabelValue(value)) {
          causes.push({
            type: 'FieldValueInvalid',
            field: `metadata.labels`,
            message: `Invalid value: ${JSON.stringify(value)}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
          });
        }
      }
    }
    causes.push(...ownerReferenceCauses(metadata['ownerReferences']));
    if (causes.length > 0) throw invalid(this.ref(type, name), causes);
  }

  private finishWrite(
    type: ResourceType,
    before: JsonObject | undefined,
    after: JsonObject,
    options: WriteOptions,
    subresource: string,
  ): JsonObject {
    const applyOptions = {
      manager: options.fieldManager,
      rules: this.mergeRules(type),
      apiVersion: apiVersionOf(type.group, type.version),
      now: this.timestamp(),
      ...(subresource !== '' ? { subresource } : {}),
    };
    return recordUpdate(before, after, applyOptions);
  }

  /** Creates an object (POST). `body` must be a fresh object the core may keep. */
  create(
    type: ResourceType,
    namespace: string,
    body: JsonObject,
    options: WriteOptions,
    managedFieldsDone = false,
  ): JsonObject {
    this.checkTypeMeta(type, body);
    const metadata = meta(body);
    if (type.namespaced) {
      if (
        metadata['namespace'] !== undefined &&
        metadata['namespace'] !== '' &&
        metadata['namespace'] !== namespace
      ) {
        throw badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      metadata['namespace'] = namespace;
    } else {
      delete metadata['namespace'];
    }
    let name = typeof metadata['name'] === 'string' ? metadata['name'] : '';
    if (
      name === '' &&
      typeof metadata['generateName'] === 'string' &&
      metadata['generateName'] !== ''
    ) {
      name = nameFromGenerateName(metadata['generateName']);
      metadata['name'] = name;
    }
    if (name === '') {
      throw invalid(this.ref(type, ''), [
        {
          type: 'FieldValueRequired',
          field: 'metadata.name',
          message: 'Required value: name or generateName is required',
        },
      ]);
    }
    this.validateMetadata(type, metadata, name);
    this.checkNamespace(type, namespace, name);
    if (this.store.get(this.key(type), type.namespaced ? namespace : '', name))
      throw alreadyExists(this.ref(type, name));
    for (const k of [
      'resourceVersion',
      'uid',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'generation',
      'selfLink',
    ]) {
      delete metadata[k];
    }
    // Status is the controllers' to write: a create through the main resource cannot set it.
    if (type.statusSubresource) delete body['status'];
    let object = body;
    strategyOf(type.group, type.kind).prepareCreate?.(object, this.strategyContext);
    object = this.applySchema(type, object, options, name);
    this.validateBuiltin(type, object, name);
    const now = this.timestamp();
    const m = meta(object);
    m['uid'] = randomUUID();
    m['creationTimestamp'] = now;
    if (type.hasGeneration) m['generation'] = 1;
    if (type.group === 'apiextensions.k8s.io' && type.kind === 'CustomResourceDefinition') {
      object['status'] = establishedStatus(object, undefined, now);
      m['finalizers'] = [
        ...stringItems(m['finalizers']).filter((f) => f !== crdCleanupFinalizer),
        crdCleanupFinalizer,
      ];
    }
    if (!managedFieldsDone) object = this.finishWrite(type, undefined, object, options, '');
    object['apiVersion'] = apiVersionOf(type.group, type.storageVersion);
    if (options.user !== undefined) this.admission?.(type, object, options.user);
    if (options.dryRun) return this.present(type, object);
    const stored = this.store.put(this.key(type), object);
    if (type.kind === 'CustomResourceDefinition' && type.group === 'apiextensions.k8s.io')
      this.serveCrd(stored);
    return this.present(type, stored);
  }

  /** Registers (or re-registers) the types a CRD serves. */
  serveCrd(crd: JsonObject): void {
    const name = text((crd['metadata'] as JsonObject)['name']);
    this.registry.removeCrd(name);
    for (const type of resourceTypesOfCrd(crd)) {
      this.registry.add(type);
    }
    for (const cached of [...this.rulesCache.keys()])
      if (cached.crdName === name) this.rulesCache.delete(cached);
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
    const ns = type.namespaced ? namespace : '';
    const existing = this.store.get(this.key(type), ns, name);
    if (!existing) throw notFound(this.ref(type, name));
    this.checkTypeMeta(type, body);
    const metadata = meta(body);
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
    const requestedRv = meta(body)['resourceVersion'];
    if (
      requestedRv !== undefined &&
      requestedRv !== '' &&
      requestedRv !== oldMeta['resourceVersion']
    ) {
      throw conflict(this.ref(type, name), staleObjectMessage);
    }
    if (this.faults?.takeConflict(this.key(type), namespace, name)) {
      throw conflict(this.ref(type, name), staleObjectMessage);
    }
    const presentedOld = this.present(type, existing);
    let object: JsonObject;
    if (subresource === 'status') {
      object = { ...clone(presentedOld), status: body['status'] ?? {} };
      if (body['status'] === undefined) delete object['status'];
    } else if (subresource === 'finalize') {
      const spec = isJsonObject(body['spec']) ? body['spec'] : {};
      object = clone(presentedOld);
      const oldSpec = isJsonObject(object['spec']) ? object['spec'] : {};
      object['spec'] = { ...oldSpec, finalizers: spec['finalizers'] ?? [] };
    } else {
      object = body;
      const m = meta(object);
      for (const k of [
        'uid',
        'creationTimestamp',
        'deletionTimestamp',
        'deletionGracePeriodSeconds',
        'generation',
      ]) {
        if (oldMeta[k] !== undefined) m[k] = oldMeta[k];
        else delete m[k];
      }
      if (type.namespaced) m['namespace'] = namespace;
      m['name'] = name;
      if (m['managedFields'] === undefined && oldMeta['managedFields'] !== undefined)
        m['managedFields'] = oldMeta['managedFields'];
      if (type.statusSubresource) {
        if (presentedOld['status'] !== undefined) object['status'] = presentedOld['status'];
        else delete object['status'];
      }
      this.validateMetadata(type, m, name);
      strategyOf(type.group, type.kind).prepareUpdate?.(object, presentedOld);
      object = this.applySchema(type, object, options, name);
      this.validateBuiltin(type, object, name);
      if (type.group === 'apiextensions.k8s.io' && type.kind === 'CustomResourceDefinition') {
        object['status'] = establishedStatus(object, presentedOld['status'], this.timestamp());
      }
      // Finalizers may only be removed, not added, once deletion has started.
      if (oldMeta['deletionTimestamp'] !== undefined) {
        const oldFinalizers = stringItems(oldMeta['finalizers']);
        const added = stringItems(m['finalizers']).filter((f) => !oldFinalizers.includes(f));
        if (added.length > 0) {
          throw invalid(this.ref(type, name), [
            {
              type: 'FieldValueForbidden',
              field: 'metadata.finalizers',
              message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
            },
          ]);
        }
      }
    }
    const m = meta(object);
    m['resourceVersion'] = oldMeta['resourceVersion'] ?? '';
    if (type.hasGeneration) {
      const ignored = type.statusSubresource ? ['metadata', 'status'] : ['metadata'];
      const changed = !jsonEqual(withoutKeys(object, ignored), withoutKeys(presentedOld, ignored));
      m['generation'] =
        (typeof oldMeta['generation'] === 'number' ? oldMeta['generation'] : 1) + (changed ? 1 : 0);
    }
    if (!managedFieldsDone)
      object = this.finishWrite(type, presentedOld, object, options, subresource);
    // A write that changes nothing (ignoring managedFields timestamps) is a no-op, as in kube.
    if (sameButBookkeeping(object, presentedOld)) return presentedOld;
    object['apiVersion'] = apiVersionOf(type.group, type.storageVersion);
    if (options.user !== undefined && subresource === '')
      this.admission?.(type, object, options.user);
    if (options.dryRun) return this.present(type, object);
    if (this.readyToRemove(type, object)) {
      return this.present(type, this.store.remove(this.key(type), namespace, name) ?? object);
    }
    const stored = this.store.put(this.key(type), object);
    if (type.kind === 'CustomResourceDefinition' && type.group === 'apiextensions.k8s.io')
      this.serveCrd(stored);
    return this.present(type, stored);
  }

  private readyToRemove(type: ResourceType, object: JsonObject): boolean {
    const m = object['metadata'] as JsonObject;
    if (m['deletionTimestamp'] === undefined) return false;
    if (stringItems(m['finalizers']).length > 0) return false;
    if (type.group === '' && type.kind === 'Namespace') {
      const spec = isJsonObject(object['spec']) ? object['spec'] : {};
      if (stringItems(spec['finalizers']).length > 0) return false;
    }
    return true;
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
    const ns = type.namespaced ? namespace : '';
    const existing = this.store.get(this.key(type), ns, name);
    let patchBody: unknown;
    try {
      patchBody = patchType === 'apply' ? parseApplyConfiguration(raw) : JSON.parse(raw);
    } catch (error) {
      throw new ApiError(
        'BadRequest',
        `error decoding patch: ${error instanceof Error ? error.message : String(error)}`,
        undefined,
        { cause: error },
      );
    }
    try {
      if (patchType === 'apply') {
        if (!isJsonObject(patchBody))
          throw badRequest('error decoding YAML: the applied configuration must be an object');
        const applied = patchBody;
        if (!options.fieldManager || options.fieldManager === 'unknown') {
          throw badRequest(
            'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
          );
        }
        const appliedMeta = isJsonObject(applied['metadata']) ? applied['metadata'] : {};
        if (appliedMeta['name'] !== undefined && appliedMeta['name'] !== name) {
          throw badRequest(
            `the name of the object (${text(appliedMeta['name'])}) does not match the name on the URL (${name})`,
          );
        }
        const applyOptions = {
          manager: options.fieldManager,
          force: options.force,
          rules: this.mergeRules(type),
          apiVersion: apiVersionOf(type.group, type.version),
          now: this.timestamp(),
          ...(subresource !== '' ? { subresource } : {}),
        };
        if (!existing) {
          if (subresource !== '') throw notFound(this.ref(type, name));
          const fresh = serverSideApply(undefined, clone(applied), applyOptions);
          const body = clone(fresh);
          meta(body)['name'] = name;
          return this.create(type, namespace, body, options, true);
        }
        // As kube-apiserver: a resourceVersion in the applied configuration is a precondition.
        const appliedRv = appliedMeta['resourceVersion'];
        const existingRv = (existing['metadata'] as JsonObject)['resourceVersion'];
        if (typeof appliedRv === 'string' && appliedRv !== '' && appliedRv !== existingRv)
          throw conflict(this.ref(type, name), staleObjectMessage);
        const presented = this.present(type, existing);
        const merged = serverSideApply(clone(presented), clone(applied), applyOptions);
        return this.replace(type, existing, merged, options, subresource, true);
      }
      if (!existing) throw notFound(this.ref(type, name));
      const presented = this.present(type, existing);
      let result: JsonValue;
      if (patchType === 'json') result = applyJsonPatch(clone(presented), patchBody);
      else if (!isJsonObject(patchBody)) throw badRequest('the patch must be a JSON object');
      else if (patchType === 'merge') result = writableCopy(applyMergePatch(presented, patchBody));
      else {
        if (type.crdName !== undefined) {
          throw new ApiError(
            'UnsupportedMediaType',
            `strategic merge patch is not supported for custom resources; use merge patch`,
          );
        }
        result = applyStrategicMergePatch(clone(presented), patchBody, this.mergeRules(type));
      }
      if (!isJsonObject(result)) throw badRequest('the patched object is not a JSON object');
      const resultMeta = meta(result);
      if (resultMeta['name'] !== undefined && resultMeta['name'] !== name) {
        throw badRequest(
          `the name of the object (${text(resultMeta['name'])}) does not match the name on the URL (${name})`,
        );
      }
      this.checkTypeMeta(type, result);
      if (subresource === 'status') {
        // PATCH /status keeps everything but status, with the precondition of the patch if any.
        return this.replace(type, existing, result, options, 'status', false);
      }
      return this.replace(type, existing, result, options, subresource, false);
    } catch (error) {
      if (error instanceof PatchError) {
        throw new ApiError(error.reason, error.message, undefined, { cause: error });
      }
      if (error instanceof ApplyConflictError) {
        throw new ApiError(
          'Conflict',
          `Apply failed with ${error.conflicts.length} conflict${error.conflicts.length === 1 ? '' : 's'}: ${error.conflicts.map((c) => `conflict with "${c.manager}": ${c.field}`).join('\n')}`,
          {
            causes: error.conflicts.map((c) => ({
              type: 'FieldManagerConflict',
              message: `conflict with "${c.manager}"`,
              field: c.field,
            })),
          },
          { cause: error },
        );
      }
      throw error;
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
    const ns = type.namespaced ? namespace : '';
    const key = this.key(type);
    const existing = this.store.get(key, ns, name);
    if (!existing) throw notFound(this.ref(type, name));
    const oldMeta = existing['metadata'] as JsonObject;
    const pre = options.preconditions;
    if (pre?.uid !== undefined && pre.uid !== oldMeta['uid']) {
      throw conflict(
        this.ref(type, name),
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${text(oldMeta['uid'])}`,
      );
    }
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== oldMeta['resourceVersion']) {
      throw conflict(
        this.ref(type, name),
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${text(oldMeta['resourceVersion'])}`,
      );
    }
    if (this.faults?.takeConflict(key, ns, name))
      throw conflict(this.ref(type, name), staleObjectMessage);
    const finalizers = stringItems(oldMeta['finalizers']);
    const policy = options.propagationPolicy;
    const extra =
      policy === 'Foreground' ? 'foregroundDeletion' : policy === 'Orphan' ? 'orphan' : undefined;
    const isNamespace = type.group === '' && type.kind === 'Namespace';
    const needsMark = finalizers.length > 0 || extra !== undefined || isNamespace;
    if (!needsMark) {
      if (options.dryRun) return { object: this.present(type, existing), deleted: true };
      const removed = this.store.remove(key, ns, name) ?? existing;
      return { object: this.present(type, removed), deleted: true };
    }
    const object = clone(this.present(type, existing));
    const m = meta(object);
    let changed = false;
    if (m['deletionTimestamp'] === undefined) {
      m['deletionTimestamp'] = this.timestamp();
      m['deletionGracePeriodSeconds'] = 0;
      changed = true;
    }
    if (extra !== undefined && !finalizers.includes(extra)) {
      const kept =
        extra === 'orphan'
          ? finalizers.filter((f) => f !== 'foregroundDeletion')
          : finalizers.filter((f) => f !== 'orphan');
      m['finalizers'] = [...kept, extra];
      changed = true;
    }
    if (isNamespace && object['status'] !== undefined) {
      const status = isJsonObject(object['status']) ? object['status'] : {};
      if (status['phase'] !== 'Terminating') {
        object['status'] = { ...status, phase: 'Terminating' };
        changed = true;
      }
    }
    if (!changed) return { object: this.present(type, existing), deleted: false };
    object['apiVersion'] = apiVersionOf(type.group, type.storageVersion);
    if (options.dryRun) return { object: this.present(type, object), deleted: false };
    if (this.readyToRemove(type, object)) {
      const removed = this.store.remove(key, ns, name) ?? object;
      return { object: this.present(type, removed), deleted: true };
    }
    return { object: this.present(type, this.store.put(key, object)), deleted: false };
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
    meta(object)['finalizers'] = finalizers.filter((f) => f !== finalizer);
    this.replace(
      type,
      this.store.get(this.key(type), type.namespaced ? namespace : '', name) ?? existing,
      object,
      systemWrite(),
      '',
      false,
    );
  }
}

/** Write options for the server's own controllers. */
export function systemWrite(manager = 'devcluster'): WriteOptions {
  return { dryRun: false, fieldManager: manager, fieldValidation: 'Ignore', warnings: [] };
}

// Apply configurations are YAML, and most clients send them as JSON, which is YAML too and
// parses many times faster as JSON.
function parseApplyConfiguration(raw: string): unknown {
  if (raw.trimStart().startsWith('{')) {
    try {
      return JSON.parse(raw);
    } catch {
      // A YAML flow mapping that is not JSON: parsed as YAML below.
    }
  }
  return parseYaml(raw);
}
