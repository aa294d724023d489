// What the simulated workload controllers share: the fail annotation, pod template hashes,
// owner references, conditions, writes that tolerate races, and the events they record.
import { systemWrite, type ApiCore } from '../api/core.js';
import { ApiError } from '../api/errors.js';
import {
  canonicalJson,
  isJsonObject,
  text,
  type JsonObject,
  type JsonValue,
} from '../../shared/kube/json.js';
import { randomSuffix } from '../resources/names.js';

/**
 * Annotation (on a Deployment, ReplicaSet, Job or Pod) that makes its pods fail: "unready" keeps
 * them Running but not Ready; "crashloop" shows CrashLoopBackOff; "fail" ends a Job's pod Failed
 * (its first container exits 1, or N with "fail:N"); "disrupt" ends it Failed with exit code 137
 * and a DisruptionTarget condition, as an eviction does (a pod that restarts crash-loops instead
 * of either). Removing it lets new pods succeed.
 */
export const failAnnotation = 'devcluster.olmq.io/fail';

/**
 * Annotation beside the fail annotation limiting it to the pods of some completion indexes of an
 * Indexed Job, written as status.completedIndexes is ("1,3-4").
 */
export const failIndexesAnnotation = 'devcluster.olmq.io/fail-indexes';

/** A parsed fail annotation. */
export interface FailMode {
  mode: 'unready' | 'crashloop' | 'fail' | 'disrupt';
  /** The exit code of the first container of a pod that ends Failed. */
  exitCode: number;
}

/** Parses the fail annotation's value; unknown values mean no failure. */
export function parseFailMode(value: JsonValue | undefined): FailMode | undefined {
  if (typeof value !== 'string') return undefined;
  if (value === 'unready' || value === 'crashloop') return { mode: value, exitCode: 1 };
  if (value === 'disrupt') return { mode: value, exitCode: 137 };
  const fail = /^fail(?::(\d{1,3}))?$/.exec(value);
  if (fail === null) return undefined;
  const code = Number(fail[1] ?? '1');
  return code >= 1 && code <= 255 ? { mode: 'fail', exitCode: code } : undefined;
}

/** Label carrying the pod template hash on ReplicaSets and Pods. */
export const podTemplateHashLabel = 'pod-template-hash';

/** An object's metadata. */
export function metadataOf(object: JsonObject): JsonObject {
  return object['metadata'] as JsonObject;
}

/** The value when it is a JSON object, else an empty one. */
export function obj(value: JsonValue | undefined): JsonObject {
  return isJsonObject(value) ? value : {};
}

/** 32-bit FNV-1a of a string. */
export function fnv32a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

const safeAlphabet = 'bcdfghjklmnpqrstvwxz2456789';

/** The value without null members: a typed Go object does not tell a null field from an absent one. */
function withoutNulls(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (!isJsonObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, withoutNulls(v)]),
  );
}

/**
 * The pod-template-hash of a template (fnv32a, encoded with kube's safe alphabet). Like kube's
 * hash of the typed template, it ignores member order and null members, so the template
 * `kubectl rollout undo` writes back finds its old ReplicaSet again.
 */
export function podTemplateHash(template: JsonValue): string {
  return text(fnv32a(canonicalJson(withoutNulls(template))))
    .split('')
    .map((d) => safeAlphabet[Number(d)] ?? 'b')
    .join('');
}

/** The uid of an object's controller (its controlling owner reference), if any. */
export function controllerOf(object: JsonObject): string | undefined {
  const refs = metadataOf(object)['ownerReferences'];
  if (!Array.isArray(refs)) return undefined;
  for (const ref of refs)
    if (isJsonObject(ref) && ref['controller'] === true) return text(ref['uid']);
  return undefined;
}

/** A controlling, deletion-blocking owner reference to `owner`. */
export function ownerRef(owner: JsonObject, kind: string, apiVersion: string): JsonObject {
  const m = metadataOf(owner);
  return {
    apiVersion,
    kind,
    name: m['name'] ?? '',
    uid: m['uid'] ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Whether a pod's Ready condition is True. */
export function isReady(pod: JsonObject): boolean {
  const conditions = obj(pod['status'])['conditions'];
  return (
    Array.isArray(conditions) &&
    conditions.some((c) => isJsonObject(c) && c['type'] === 'Ready' && c['status'] === 'True')
  );
}

/** Runs a write, ignoring the answers a race with another writer or a deletion gives. */
export function tolerate(action: () => unknown): void {
  try {
    action();
  } catch (error) {
    if (
      error instanceof ApiError &&
      (error.reason === 'NotFound' ||
        error.reason === 'Conflict' ||
        error.reason === 'AlreadyExists' ||
        error.reason === 'Forbidden')
    )
      return;
    throw error;
  }
}

/** A Deployment condition, its times kept from `previous` while its status (and reason) hold. */
export function condition(
  type: string,
  status: boolean | 'Unknown',
  reason: string,
  message: string,
  now: string,
  previous: JsonValue | undefined,
): JsonObject {
  const list = Array.isArray(previous) ? previous.filter(isJsonObject) : [];
  const before = list.find((c) => c['type'] === type);
  const value = status === 'Unknown' ? status : status ? 'True' : 'False';
  const same = before !== undefined && before['status'] === value && before['reason'] === reason;
  return {
    type,
    status: value,
    lastUpdateTime: same ? (before['lastUpdateTime'] ?? now) : now,
    lastTransitionTime:
      before !== undefined && before['status'] === value
        ? (before['lastTransitionTime'] ?? now)
        : now,
    reason,
    message,
  };
}

/** The pods a ReplicaSet or Job controls. */
export function podsOf(core: ApiCore, rs: JsonObject): JsonObject[] {
  const uid = text(metadataOf(rs)['uid']);
  return core.store
    .list('pods', text(metadataOf(rs)['namespace']))
    .filter((p) => controllerOf(p) === uid);
}

/** Records a Normal event about `object`, as kube's controllers do (shown by kubectl describe). */
export function recordEvent(
  core: ApiCore,
  object: JsonObject,
  component: string,
  reason: string,
  message: string,
): void {
  const m = metadataOf(object);
  const namespace = text(m['namespace']);
  const now = core.timestamp();
  const body: JsonObject = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${text(m['name'])}.${randomSuffix(10)}`, namespace },
    involvedObject: {
      apiVersion: object['apiVersion'] ?? '',
      kind: object['kind'] ?? '',
      namespace,
      name: m['name'] ?? '',
      uid: m['uid'] ?? '',
      resourceVersion: m['resourceVersion'] ?? '',
    },
    reason,
    message,
    type: 'Normal',
    source: { component },
    reportingComponent: component,
    reportingInstance: '',
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
  tolerate(() => core.create(core.typeOf('', 'events'), namespace, body, systemWrite(component)));
}
