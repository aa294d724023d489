// Server-side apply and the managedFields bookkeeping of every write, following
// kube-apiserver's field manager: ownership per manager in FieldsV1, conflicts on fields
// another manager set to a different value, and removal of fields an applier dropped.
import type { JsonObject, JsonValue } from '../../shared/kube/json.js';
import { isJsonObject } from '../../shared/kube/json.js';
import { ApplyConflictError, PatchError } from './errors.js';
import type { ApplyConflict } from './errors.js';
import { FieldSet, describePath } from './fieldset.js';
import { compareObjects, fieldSetOf, mergeApplied, removeFields } from './fields.js';
import type { MergeRules } from './types.js';
import { cloneJson, compareStrings, jsonEqual } from './values.js';
import { memoized } from '../storage/memo.js';
import { kubeTime } from '../../shared/kube/time.js';

/** Who writes and how: the field manager, its merge rules and what to record. */
export interface ApplyOptions {
  /** Field manager (the fieldManager query parameter, or the client's default). */
  manager: string;
  /** Take fields from other managers instead of failing with a conflict (force=true). */
  force: boolean;
  /** Merge rules of the object's kind. */
  rules: MergeRules;
  /** apiVersion recorded in managedFields entries. */
  apiVersion: string;
  /** RFC 3339 time recorded in managedFields entries. */
  now: string;
  /** "status" when applied through the /status subresource. */
  subresource?: string;
  /**
   * Top-level fields this endpoint ignores (kube's reset fields), e.g. ["status"] for the main
   * resource of a kind with a status subresource: they are neither applied nor owned.
   */
  resetFields?: readonly string[];
}

type Operation = 'Apply' | 'Update';

/** One decoded metadata.managedFields entry. */
interface ManagerEntry {
  manager: string;
  operation: Operation;
  apiVersion: string;
  time?: string;
  subresource?: string;
  fields: FieldSet;
  /**
   * The stored FieldsV1 `fields` was read from: written out again as it is while `fields` stays
   * the same set, instead of being encoded anew (stored FieldsV1 is already in canonical form).
   */
  stored?: { fields: FieldSet; json: JsonObject };
}

// Fields no manager ever owns: identity and bookkeeping kube-apiserver strips from field sets.
const UNOWNED: readonly string[][] = [
  ['f:apiVersion'],
  ['f:kind'],
  ['f:metadata'],
  ['f:metadata', 'f:name'],
  ['f:metadata', 'f:namespace'],
  ['f:metadata', 'f:creationTimestamp'],
  ['f:metadata', 'f:selfLink'],
  ['f:metadata', 'f:uid'],
  ['f:metadata', 'f:clusterName'],
  ['f:metadata', 'f:generation'],
  ['f:metadata', 'f:managedFields'],
  ['f:metadata', 'f:resourceVersion'],
  ['f:metadata', 'f:deletionTimestamp'],
  ['f:metadata', 'f:deletionGracePeriodSeconds'],
];

// Built once: difference() reads it and never changes it.
const unownedSet = new FieldSet();
for (const path of UNOWNED) unownedSet.insert(path);

// The part of a field set managers can own: without UNOWNED and reset fields.
function ownable(set: FieldSet, resetFields: readonly string[] | undefined): FieldSet {
  const out = set.difference(unownedSet);
  if (resetFields === undefined || resetFields.length === 0) return out;
  return out.withoutChildren(resetFields.map((field) => `f:${field}`));
}

// Managers are told apart the way kube-apiserver keys them: appliers by name and subresource,
// updaters also by apiVersion.
type ManagerIdentity = Pick<ManagerEntry, 'manager' | 'operation' | 'apiVersion' | 'subresource'>;

function sameManager(a: ManagerIdentity, b: ManagerIdentity): boolean {
  return (
    a.manager === b.manager &&
    a.operation === b.operation &&
    (a.operation !== 'Update' || a.apiVersion === b.apiVersion) &&
    (a.subresource ?? '') === (b.subresource ?? '')
  );
}

/**
 * Decodes managedFields. `stored` says they are the stored object's (canonical FieldsV1, kept
 * for unchanged entries); what a client sent is always encoded anew.
 */
function decodeEntries(value: JsonValue | undefined, stored: boolean): ManagerEntry[] {
  if (!Array.isArray(value)) return [];
  // A stored list never changes, so it is decoded once; each write gets entries of its own
  // (it reassigns their fields), sharing the decoded field sets, which are never modified.
  if (stored) return memoized(value, decodedSlot, decodeStoredEntries).map((e) => ({ ...e }));
  return decodeList(value, false);
}

const decodedSlot = Symbol('decodedManagedFields');

function decodeStoredEntries(value: JsonValue[]): readonly ManagerEntry[] {
  return decodeList(value, true);
}

function decodeList(value: readonly JsonValue[], stored: boolean): ManagerEntry[] {
  const entries: ManagerEntry[] = [];
  for (const raw of value) {
    if (!isJsonObject(raw) || typeof raw.manager !== 'string') continue;
    if (raw.operation !== 'Apply' && raw.operation !== 'Update') continue;
    const entry: ManagerEntry = {
      manager: raw.manager,
      operation: raw.operation,
      apiVersion: typeof raw.apiVersion === 'string' ? raw.apiVersion : '',
      fields: FieldSet.fromFieldsV1(raw.fieldsV1),
    };
    if (stored && isJsonObject(raw.fieldsV1))
      entry.stored = { fields: entry.fields, json: raw.fieldsV1 };
    if (typeof raw.time === 'string') entry.time = raw.time;
    if (typeof raw.subresource === 'string' && raw.subresource !== '')
      entry.subresource = raw.subresource;
    entries.push(entry);
  }
  return entries;
}

// kube-apiserver's order: Apply before Update, then oldest first, then by name.
function compareEntries(a: ManagerEntry, b: ManagerEntry): number {
  return (
    compareStrings(a.operation, b.operation) ||
    compareStrings(secondsOf(a.time), secondsOf(b.time)) ||
    compareStrings(a.manager, b.manager) ||
    compareStrings(a.apiVersion, b.apiVersion) ||
    compareStrings(a.subresource ?? '', b.subresource ?? '')
  );
}

function secondsOf(time: string | undefined): string {
  if (time === undefined) return '';
  // The server's own stamps are already whole seconds in this form: no need to parse them.
  if (wholeSeconds.test(time)) return time;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? time : kubeTime(new Date(ms));
}

const wholeSeconds = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

function encodeEntries(entries: readonly ManagerEntry[]): JsonObject[] {
  const decoded: ManagerEntry[] = [];
  const list = entries
    .filter((e) => !e.fields.isEmpty())
    .sort(compareEntries)
    .map((e) => {
      const out: JsonObject = {
        manager: e.manager,
        operation: e.operation,
        apiVersion: e.apiVersion,
      };
      if (e.time !== undefined) out.time = e.time;
      out.fieldsType = 'FieldsV1';
      const json = e.stored?.fields === e.fields ? e.stored.json : e.fields.toFieldsV1();
      out.fieldsV1 = json;
      if (e.subresource !== undefined) out.subresource = e.subresource;
      decoded.push({ ...e, stored: { fields: e.fields, json } });
      return out;
    });
  // Once stored, the list is what the next write of the object decodes: its entries are these.
  memoized(list, decodedSlot, () => decoded);
  return list;
}

function metadataOf(object: JsonObject | undefined): JsonObject {
  const metadata = object?.metadata;
  return isJsonObject(metadata) ? metadata : {};
}

// The object as field sets see it: without managedFields and without reset fields.
function ownedView(object: JsonObject, resetFields: readonly string[] | undefined): JsonObject {
  const view: JsonObject = { ...object };
  for (const field of resetFields ?? []) delete view[field];
  const metadata = metadataOf(object);
  if ('managedFields' in metadata) {
    const rest: JsonObject = { ...metadata };
    delete rest.managedFields;
    view.metadata = rest;
  }
  return view;
}

// `object` may be a stored object (an apply that changes nothing), so it is copied deeply.
function withManagedFields(object: JsonObject, entries: readonly ManagerEntry[]): JsonObject {
  return replaceManagedFields(cloneJson(object), entries);
}

// Sets managedFields on a copy of `object` that shares everything but metadata with it: only for
// objects the caller built for this write and does not keep (recordUpdate's `after`).
function replaceManagedFields(object: JsonObject, entries: readonly ManagerEntry[]): JsonObject {
  const out: JsonObject = { ...object };
  const metadata: JsonObject = { ...metadataOf(out) };
  const encoded = encodeEntries(entries);
  if (encoded.length > 0) metadata.managedFields = encoded;
  else delete metadata.managedFields;
  out.metadata = metadata;
  return out;
}

// The applier's field set; malformed lists are reported the way kube-apiserver words them.
function typedFieldSet(config: JsonObject, rules: MergeRules): FieldSet {
  try {
    return fieldSetOf(config, rules, true);
  } catch (err) {
    if (!(err instanceof PatchError)) throw err;
    const apiVersion = typeof config.apiVersion === 'string' ? config.apiVersion : '';
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
    const kind = typeof config.kind === 'string' ? config.kind : '';
    throw new PatchError(
      `failed to create typed patch object (${group ?? ''}/${version ?? ''}, Kind=${kind}): ${err.message}`,
      err.reason,
      { cause: err },
    );
  }
}

/**
 * An applied configuration without its null fields: kube-apiserver decodes them to unset Go
 * fields, so `creationTimestamp: null` from `kubectl create --dry-run -o yaml` sets nothing.
 */
function withoutNullFields<T extends JsonValue>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => withoutNullFields(item)) as T;
  if (!isJsonObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value))
    if (child !== null) out[key] = withoutNullFields(child);
  return out as T;
}

// Metadata the API server maintains; an apply never changes it on a stored object.
const SYSTEM_METADATA = [
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'generation',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'selfLink',
];

function keepSystemMetadata(merged: JsonObject, live: JsonObject): JsonObject {
  const liveMetadata = metadataOf(live);
  const metadata: JsonObject = { ...metadataOf(merged) };
  let changed = false;
  for (const field of SYSTEM_METADATA) {
    const kept = liveMetadata[field];
    if (
      jsonEqual(metadata[field], kept) ||
      (kept === undefined && Object.keys(liveMetadata).length === 0)
    )
      continue;
    if (kept === undefined) delete metadata[field];
    else metadata[field] = kept;
    changed = true;
  }
  return changed ? { ...merged, metadata } : merged;
}

/**
 * `set` plus every field above its paths, as kube's EnsureNamedFieldsAreMembers: a map still
 * holding owned fields is not dropped with its "." entry (the one kubectl's client-side to
 * server-side migration leaves to the applier, e.g. `f:spec: {".": {}}`).
 */
function withFieldAncestors(set: FieldSet): FieldSet {
  const out = set.clone();
  for (const path of set.paths())
    for (let i = 1; i < path.length; i++)
      if (path[i - 1]?.startsWith('f:')) out.insert(path.slice(0, i));
  return out;
}

function entryFor(
  options: Omit<ApplyOptions, 'force'>,
  operation: Operation,
  fields: FieldSet,
  time: string | undefined,
): ManagerEntry {
  const entry: ManagerEntry = {
    manager: options.manager,
    operation,
    apiVersion: options.apiVersion,
    fields,
  };
  if (time !== undefined) entry.time = time;
  if (options.subresource !== undefined && options.subresource !== '')
    entry.subresource = options.subresource;
  return entry;
}

/**
 * Server-side apply (application/apply-patch+yaml, already parsed to JSON): merges `applied`
 * into `live` (undefined = create), removes fields this manager applied before but no longer
 * does, and returns the new object with metadata.managedFields updated. Throws
 * ApplyConflictError unless `force`.
 */
export function serverSideApply(
  live: JsonObject | undefined,
  applied: JsonObject,
  options: ApplyOptions,
): JsonObject {
  const appliedMetadata = applied.metadata;
  if (
    isJsonObject(appliedMetadata) &&
    appliedMetadata.managedFields !== undefined &&
    appliedMetadata.managedFields !== null
  ) {
    throw new PatchError('metadata.managedFields must be nil', 'BadRequest');
  }
  const { rules, resetFields } = options;
  const config = withoutNullFields(ownedView(applied, resetFields));
  const liveView = ownedView(live ?? {}, undefined);
  const entries = decodeEntries(metadataOf(live).managedFields, true);
  const self: ManagerIdentity = { ...options, operation: 'Apply' };
  const previous = entries.find((e) => sameManager(e, self));
  const others = entries.filter((e) => !sameManager(e, self));
  const appliedFields = ownable(typedFieldSet(config, rules), resetFields);

  const merged = keepSystemMetadata(mergeApplied(liveView, config, rules), liveView);
  const changes = compareObjects(liveView, merged, rules);
  const changed = changes.modified.union(changes.added);
  const conflicts: ApplyConflict[] = [];
  for (const other of others) {
    const taken = other.fields.intersection(changed);
    if (taken.isEmpty()) continue;
    for (const path of taken.paths()) {
      const conflict: ApplyConflict = {
        manager: other.manager,
        field: describePath(path),
        operation: other.operation,
        apiVersion: other.apiVersion,
      };
      if (other.subresource !== undefined) conflict.subresource = other.subresource;
      conflicts.push(conflict);
    }
    other.fields = other.fields.difference(taken);
  }
  if (conflicts.length > 0 && !options.force) throw new ApplyConflictError(conflicts);

  // Fields this applier owned before and dropped now go, unless someone else still owns them.
  let result = merged;
  if (previous) {
    let stillOwned = appliedFields;
    for (const other of others) stillOwned = stillOwned.union(other.fields);
    let dropped = previous.fields.difference(stillOwned);
    if (!dropped.isEmpty()) dropped = dropped.difference(withFieldAncestors(stillOwned));
    if (!dropped.isEmpty()) result = removeFields(merged, dropped, rules);
  }
  const removed = compareObjects(liveView, result, rules).removed;
  for (const other of others) other.fields = other.fields.difference(removed);

  const unchanged = jsonEqual(liveView, result);
  const time = unchanged && previous?.time !== undefined ? previous.time : options.now;
  const next = [...others, entryFor(options, 'Apply', appliedFields, time)];
  // An apply that changes nothing keeps the stored object as it is; only ownership may move.
  return withManagedFields(live && unchanged ? live : result, next);
}

/**
 * Records a non-apply write (create, update, patch) in managedFields: the manager takes
 * ownership (operation "Update") of every field it changed. Returns `after` with updated
 * metadata.managedFields. `after` must be an object built for this write: the result shares all
 * but its metadata with it.
 */
export function recordUpdate(
  before: JsonObject | undefined,
  after: JsonObject,
  options: Omit<ApplyOptions, 'force'>,
): JsonObject {
  const { rules, resetFields } = options;
  // As kube-apiserver: `managedFields: [{}]` resets ownership, other managedFields a writer
  // sends replace the stored ones, and a write without (or with empty) managedFields keeps them.
  const sent = metadataOf(after).managedFields;
  const stored = metadataOf(before).managedFields;
  const reset = Array.isArray(sent) && sent.length === 1 && jsonEqual(sent[0], {});
  // Most writes send the stored managedFields back unchanged (a patched copy, a PUT of a GET):
  // then the stored (already decoded) entries are the ones to start from.
  const sentEntries = reset ? [] : jsonEqual(sent, stored) ? [] : decodeEntries(sent, false);
  const entries = reset || sentEntries.length > 0 ? sentEntries : decodeEntries(stored, true);
  const changes = compareObjects(
    ownedView(before ?? {}, resetFields),
    ownedView(after, resetFields),
    rules,
  );
  const touched = changes.modified.union(changes.added);
  const original = entries.map((entry) => entry.fields);
  for (const entry of entries) {
    entry.fields = entry.fields.difference(touched).difference(changes.removed);
  }
  const taken = ownable(touched, resetFields);
  if (!taken.isEmpty()) {
    const self: ManagerIdentity = {
      manager: options.manager,
      operation: 'Update',
      apiVersion: options.apiVersion,
      ...(options.subresource !== undefined ? { subresource: options.subresource } : {}),
    };
    const index = entries.findIndex((e) => sameManager(e, self));
    const prior = index >= 0 ? entries.splice(index, 1)[0] : undefined;
    let fields = prior ? prior.fields.union(taken) : taken;
    // A manager writing the fields it owns again keeps the same set (and its encoded form).
    const owned = index >= 0 ? original[index] : undefined;
    if (owned !== undefined && fields.equals(owned)) fields = owned;
    const entry = entryFor(options, 'Update', fields, options.now);
    if (prior?.stored?.fields === fields) entry.stored = prior.stored;
    entries.push(entry);
  }
  return replaceManagedFields(after, entries);
}
