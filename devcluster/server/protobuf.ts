// Kubernetes protobuf request bodies (application/vnd.kubernetes.protobuf) for the kinds kubectl
// 1.32+ sends that way (`kubectl create configmap|deployment|namespace|...`, `auth can-i`,
// `create token`). The envelope is "k8s\0" + runtime.Unknown{typeMeta, raw}; `raw` is decoded
// with the field numbers of the kind's generated.proto. Responses stay JSON.
import { ApiError } from '../api/errors.js';
import type { JsonObject, JsonValue } from '../../shared/kube/json.js';
import { kubeTime } from '../../shared/kube/time.js';

/** How one protobuf field maps to JSON. */
type FieldType =
  | 'string'
  | 'int'
  | 'bool'
  | 'bytes'
  | 'time'
  | 'intOrString'
  | 'map<string,string>'
  | 'map<string,bytes>'
  | 'map<string,quantity>'
  | { message: string };

interface FieldSpec {
  name: string;
  type: FieldType;
  repeated?: boolean;
  /** Optional (pointer) fields whose zero value was set on purpose, e.g. replicas: 0. */
  keepZero?: boolean;
}

type MessageSpec = Readonly<Record<number, FieldSpec>>;

const s = (name: string, repeated = false): FieldSpec => ({ name, type: 'string', repeated });
const i = (name: string, keepZero = false): FieldSpec => ({ name, type: 'int', keepZero });
const b = (name: string): FieldSpec => ({ name, type: 'bool' });
const m = (name: string, message: string, repeated = false): FieldSpec => ({
  name,
  type: { message },
  repeated,
});
const map = (
  name: string,
  type: 'map<string,string>' | 'map<string,bytes>' | 'map<string,quantity>' = 'map<string,string>',
): FieldSpec => ({
  name,
  type,
});

/** Field numbers of the messages decoded, from Kubernetes' generated.proto files. */
const messages: Readonly<Record<string, MessageSpec>> = {
  ObjectMeta: {
    1: s('name'),
    2: s('generateName'),
    3: s('namespace'),
    5: s('uid'),
    6: s('resourceVersion'),
    7: i('generation'),
    11: map('labels'),
    12: map('annotations'),
    13: m('ownerReferences', 'OwnerReference', true),
    14: s('finalizers', true),
  },
  OwnerReference: {
    1: s('kind'),
    3: s('name'),
    4: s('uid'),
    5: s('apiVersion'),
    6: b('controller'),
    7: b('blockOwnerDeletion'),
  },
  ConfigMap: {
    1: m('metadata', 'ObjectMeta'),
    2: map('data'),
    3: map('binaryData', 'map<string,bytes>'),
    4: b('immutable'),
  },
  Secret: {
    1: m('metadata', 'ObjectMeta'),
    2: map('data', 'map<string,bytes>'),
    3: s('type'),
    4: map('stringData'),
    5: b('immutable'),
  },
  Namespace: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'NamespaceSpec') },
  NamespaceSpec: { 1: s('finalizers', true) },
  ServiceAccount: {
    1: m('metadata', 'ObjectMeta'),
    2: m('secrets', 'ObjectReference', true),
    3: m('imagePullSecrets', 'LocalObjectReference', true),
    4: b('automountServiceAccountToken'),
  },
  ObjectReference: {
    1: s('kind'),
    2: s('namespace'),
    3: s('name'),
    4: s('uid'),
    5: s('apiVersion'),
    6: s('resourceVersion'),
    7: s('fieldPath'),
  },
  LocalObjectReference: { 1: s('name') },
  Service: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'ServiceSpec') },
  ServiceSpec: {
    1: m('ports', 'ServicePort', true),
    2: map('selector'),
    3: s('clusterIP'),
    4: s('type'),
    7: s('sessionAffinity'),
  },
  ServicePort: {
    1: s('name'),
    2: s('protocol'),
    3: i('port'),
    4: { name: 'targetPort', type: 'intOrString' },
    5: i('nodePort'),
  },
  Deployment: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'DeploymentSpec') },
  DeploymentSpec: {
    1: i('replicas', true),
    2: m('selector', 'LabelSelector'),
    3: m('template', 'PodTemplateSpec'),
    4: m('strategy', 'DeploymentStrategy'),
    5: i('minReadySeconds'),
    6: i('revisionHistoryLimit', true),
    7: b('paused'),
    9: i('progressDeadlineSeconds'),
  },
  DeploymentStrategy: { 1: s('type'), 2: m('rollingUpdate', 'RollingUpdateDeployment') },
  RollingUpdateDeployment: {
    1: { name: 'maxUnavailable', type: 'intOrString' },
    2: { name: 'maxSurge', type: 'intOrString' },
  },
  LabelSelector: {
    1: map('matchLabels'),
    2: m('matchExpressions', 'LabelSelectorRequirement', true),
  },
  LabelSelectorRequirement: { 1: s('key'), 2: s('operator'), 3: s('values', true) },
  PodTemplateSpec: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'PodSpec') },
  PodSpec: {
    2: m('containers', 'Container', true),
    3: s('restartPolicy'),
    4: i('terminationGracePeriodSeconds', true),
    6: s('dnsPolicy'),
    7: map('nodeSelector'),
    8: s('serviceAccountName'),
    10: s('nodeName'),
    20: m('initContainers', 'Container', true),
  },
  Container: {
    1: s('name'),
    2: s('image'),
    3: s('command', true),
    4: s('args', true),
    5: s('workingDir'),
    6: m('ports', 'ContainerPort', true),
    7: m('env', 'EnvVar', true),
    8: m('resources', 'ResourceRequirements'),
    13: s('terminationMessagePath'),
    14: s('imagePullPolicy'),
    20: s('terminationMessagePolicy'),
  },
  ContainerPort: {
    1: s('name'),
    2: i('hostPort'),
    3: i('containerPort'),
    4: s('protocol'),
    5: s('hostIP'),
  },
  EnvVar: { 1: s('name'), 2: s('value') },
  ResourceRequirements: {
    1: map('limits', 'map<string,quantity>'),
    2: map('requests', 'map<string,quantity>'),
  },
  Role: { 1: m('metadata', 'ObjectMeta'), 2: m('rules', 'PolicyRule', true) },
  ClusterRole: {
    1: m('metadata', 'ObjectMeta'),
    2: m('rules', 'PolicyRule', true),
    3: m('aggregationRule', 'AggregationRule'),
  },
  AggregationRule: { 1: m('clusterRoleSelectors', 'LabelSelector', true) },
  PolicyRule: {
    1: s('verbs', true),
    2: s('apiGroups', true),
    3: s('resources', true),
    4: s('resourceNames', true),
    5: s('nonResourceURLs', true),
  },
  RoleBinding: {
    1: m('metadata', 'ObjectMeta'),
    2: m('subjects', 'Subject', true),
    3: m('roleRef', 'RoleRef'),
  },
  ClusterRoleBinding: {
    1: m('metadata', 'ObjectMeta'),
    2: m('subjects', 'Subject', true),
    3: m('roleRef', 'RoleRef'),
  },
  Subject: { 1: s('kind'), 2: s('apiGroup'), 3: s('name'), 4: s('namespace') },
  RoleRef: { 1: s('apiGroup'), 2: s('kind'), 3: s('name') },
  SelfSubjectAccessReview: {
    1: m('metadata', 'ObjectMeta'),
    2: m('spec', 'SelfSubjectAccessReviewSpec'),
  },
  SelfSubjectAccessReviewSpec: {
    1: m('resourceAttributes', 'ResourceAttributes'),
    2: m('nonResourceAttributes', 'NonResourceAttributes'),
  },
  SubjectAccessReview: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'SubjectAccessReviewSpec') },
  LocalSubjectAccessReview: {
    1: m('metadata', 'ObjectMeta'),
    2: m('spec', 'SubjectAccessReviewSpec'),
  },
  SubjectAccessReviewSpec: {
    1: m('resourceAttributes', 'ResourceAttributes'),
    2: m('nonResourceAttributes', 'NonResourceAttributes'),
    3: s('user'),
    4: s('groups', true),
    6: s('uid'),
  },
  ResourceAttributes: {
    1: s('namespace'),
    2: s('verb'),
    3: s('group'),
    4: s('version'),
    5: s('resource'),
    6: s('subresource'),
    7: s('name'),
  },
  NonResourceAttributes: { 1: s('path'), 2: s('verb') },
  SelfSubjectRulesReview: {
    1: m('metadata', 'ObjectMeta'),
    2: m('spec', 'SelfSubjectRulesReviewSpec'),
  },
  SelfSubjectRulesReviewSpec: { 1: s('namespace') },
  SelfSubjectReview: { 1: m('metadata', 'ObjectMeta') },
  TokenRequest: { 1: m('metadata', 'ObjectMeta'), 2: m('spec', 'TokenRequestSpec') },
  TokenRequestSpec: { 1: s('audiences', true), 4: i('expirationSeconds') },
  DeleteOptions: {
    1: i('gracePeriodSeconds', true),
    2: m('preconditions', 'Preconditions'),
    3: b('orphanDependents'),
    4: s('propagationPolicy'),
    5: s('dryRun', true),
  },
  Preconditions: { 1: s('uid'), 2: s('resourceVersion') },
  Unknown: { 1: m('typeMeta', 'TypeMeta'), 2: { name: 'raw', type: 'bytes' } },
  TypeMeta: { 1: s('apiVersion'), 2: s('kind') },
};

/** A protobuf wire-format value: varint or length-delimited bytes. */
type Wire = { kind: 'varint'; value: bigint } | { kind: 'bytes'; value: Buffer };

function readVarint(buffer: Buffer, start: number): [bigint, number] {
  let result = 0n;
  let shift = 0n;
  let offset = start;
  for (;;) {
    const byte = buffer[offset++];
    if (byte === undefined) throw new Error('truncated varint');
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [result, offset];
    shift += 7n;
  }
}

function readFields(buffer: Buffer): [number, Wire][] {
  const fields: [number, Wire][] = [];
  let offset = 0;
  while (offset < buffer.length) {
    const [key, next] = readVarint(buffer, offset);
    offset = next;
    const field = Number(key >> 3n);
    const wireType = Number(key & 7n);
    if (wireType === 0) {
      const [value, after] = readVarint(buffer, offset);
      offset = after;
      fields.push([field, { kind: 'varint', value }]);
    } else if (wireType === 2) {
      const [length, after] = readVarint(buffer, offset);
      const end = after + Number(length);
      if (end > buffer.length) throw new Error('truncated field');
      fields.push([field, { kind: 'bytes', value: buffer.subarray(after, end) }]);
      offset = end;
    } else if (wireType === 1) {
      offset += 8;
    } else if (wireType === 5) {
      offset += 4;
    } else {
      throw new Error(`unsupported wire type ${wireType}`);
    }
  }
  return fields;
}

function str(wire: Wire): string {
  return wire.kind === 'bytes' ? wire.value.toString('utf8') : '';
}

function int(wire: Wire): number {
  return wire.kind === 'varint' ? Number(BigInt.asIntN(64, wire.value)) : 0;
}

function mapEntry(wire: Wire, valueType: FieldType): [string, JsonValue] {
  let key = '';
  let value: JsonValue = '';
  if (wire.kind !== 'bytes') return [key, value];
  for (const [field, inner] of readFields(wire.value)) {
    if (field === 1) key = str(inner);
    else if (field === 2) {
      if (valueType === 'map<string,bytes>')
        value = inner.kind === 'bytes' ? inner.value.toString('base64') : '';
      else if (valueType === 'map<string,quantity>')
        value = inner.kind === 'bytes' ? quantity(inner.value) : '';
      else value = str(inner);
    }
  }
  return [key, value];
}

function quantity(buffer: Buffer): string {
  const field = readFields(buffer).find(([n]) => n === 1);
  return field ? str(field[1]) : '';
}

function single(type: FieldType, wire: Wire, keepZero: boolean): JsonValue | undefined {
  if (typeof type === 'object') {
    if (wire.kind !== 'bytes') return undefined;
    const decoded = decodeMessage(type.message, wire.value);
    return Object.keys(decoded).length === 0 ? undefined : decoded;
  }
  switch (type) {
    case 'string': {
      const value = str(wire);
      return value === '' ? undefined : value;
    }
    case 'int': {
      const value = int(wire);
      return value === 0 && !keepZero ? undefined : value;
    }
    case 'bool':
      return int(wire) !== 0 ? true : undefined;
    case 'bytes':
      return wire.kind === 'bytes' ? wire.value.toString('base64') : undefined;
    case 'time': {
      if (wire.kind !== 'bytes') return undefined;
      const seconds = readFields(wire.value).find(([n]) => n === 1);
      return seconds ? kubeTime(new Date(int(seconds[1]) * 1000)) : undefined;
    }
    case 'intOrString': {
      if (wire.kind !== 'bytes') return undefined;
      const parts = new Map(readFields(wire.value));
      const kind = parts.get(1);
      return kind !== undefined && int(kind) === 1
        ? str(parts.get(3) ?? { kind: 'bytes', value: Buffer.alloc(0) })
        : int(parts.get(2) ?? { kind: 'varint', value: 0n });
    }
    default:
      return undefined;
  }
}

function decodeMessage(name: string, buffer: Buffer): JsonObject {
  const spec = messages[name];
  if (!spec) throw new Error(`no protobuf schema for ${name}`);
  const out: JsonObject = {};
  for (const [field, wire] of readFields(buffer)) {
    const fieldSpec = spec[field];
    if (!fieldSpec) continue;
    const { name: key, type } = fieldSpec;
    if (
      type === 'map<string,string>' ||
      type === 'map<string,bytes>' ||
      type === 'map<string,quantity>'
    ) {
      const [k, v] = mapEntry(wire, type);
      const target = (out[key] ??= {}) as JsonObject;
      target[k] = v;
    } else if (fieldSpec.repeated) {
      const list = (out[key] ??= []) as JsonValue[];
      // Repeated elements keep their empty values: apiGroups [""] is the core group.
      if (type === 'string') list.push(str(wire));
      else if (typeof type === 'object' && wire.kind === 'bytes')
        list.push(decodeMessage(type.message, wire.value));
      else {
        const value = single(type, wire, true);
        if (value !== undefined) list.push(value);
      }
    } else {
      const value = single(type, wire, fieldSpec.keepZero ?? false);
      if (value !== undefined) out[key] = value;
    }
  }
  return out;
}

const magic = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** Media type of Kubernetes protobuf bodies. */
export const protobufMediaType = 'application/vnd.kubernetes.protobuf';

/**
 * Decodes a protobuf request body into the JSON object it stands for. `expectedKind` names the
 * message when the envelope carries no kind (DeleteOptions). Throws 415 for kinds it cannot decode.
 */
export function decodeProtobufBody(body: Buffer, expectedKind?: string): JsonObject {
  if (body.length < 4 || !body.subarray(0, 4).equals(magic)) {
    throw new ApiError(
      'BadRequest',
      'protobuf body does not start with the Kubernetes magic number',
    );
  }
  try {
    const envelope = decodeMessage('Unknown', body.subarray(4));
    const typeMeta = (envelope['typeMeta'] ?? {}) as JsonObject;
    const kind = typeof typeMeta['kind'] === 'string' ? typeMeta['kind'] : (expectedKind ?? '');
    if (!(kind in messages) || kind === 'Unknown' || kind === 'TypeMeta') {
      throw new ApiError(
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - ${kind || 'this kind'} is accepted as application/json or application/yaml`,
      );
    }
    const raw =
      typeof envelope['raw'] === 'string'
        ? Buffer.from(envelope['raw'], 'base64')
        : Buffer.alloc(0);
    const object = decodeMessage(kind, raw);
    if (typeof typeMeta['apiVersion'] === 'string') object['apiVersion'] = typeMeta['apiVersion'];
    if (typeof typeMeta['kind'] === 'string') object['kind'] = typeMeta['kind'];
    return object;
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError(
      'BadRequest',
      `couldn't decode protobuf body: ${error instanceof Error ? error.message : 'malformed'}`,
      undefined,
      { cause: error },
    );
  }
}
