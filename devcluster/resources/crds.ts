// CustomResourceDefinitions: the status kube's CRD controllers write (names accepted,
// established, stored versions) and the resource types a CRD serves.
import { isJsonObject, text, type JsonObject, type JsonValue } from '../../shared/kube/json.js';
import { compareKubeVersions } from './registry.js';
import { defaultColumns } from './builtin.js';
import type { PrinterColumn, ResourceType, ScaleMapping } from './types.js';

/** Finalizer kube puts on CRDs so their objects are removed before the CRD goes. */
export const crdCleanupFinalizer = 'customresourcecleanup.apiextensions.k8s.io';

function strings(value: JsonValue | undefined): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function obj(value: JsonValue | undefined): JsonObject {
  return isJsonObject(value) ? value : {};
}

/** The CRD's spec.names with kube's defaults (singular, listKind). */
export function acceptedNames(crd: JsonObject): JsonObject {
  const names = obj(obj(crd['spec'])['names']);
  const kind = typeof names['kind'] === 'string' ? names['kind'] : '';
  const accepted: JsonObject = {
    plural: names['plural'] ?? '',
    singular:
      typeof names['singular'] === 'string' && names['singular'] !== ''
        ? names['singular']
        : kind.toLowerCase(),
    kind,
    listKind:
      typeof names['listKind'] === 'string' && names['listKind'] !== ''
        ? names['listKind']
        : `${kind}List`,
  };
  if (strings(names['shortNames']).length > 0)
    accepted['shortNames'] = strings(names['shortNames']);
  if (strings(names['categories']).length > 0)
    accepted['categories'] = strings(names['categories']);
  return accepted;
}

/** The storage version of a CRD (the version with storage: true). */
export function storageVersionOf(crd: JsonObject): string {
  const versions = obj(crd['spec'])['versions'];
  if (Array.isArray(versions)) {
    for (const v of versions) if (isJsonObject(v) && v['storage'] === true) return text(v['name']);
  }
  return '';
}

function condition(
  type: string,
  reason: string,
  message: string,
  now: string,
  previous: JsonObject[],
): JsonObject {
  const before = previous.find((c) => c['type'] === type);
  return {
    type,
    status: 'True',
    lastTransitionTime:
      before && before['status'] === 'True' ? (before['lastTransitionTime'] ?? now) : now,
    reason,
    message,
  };
}

/**
 * Sets the status kube's naming and establishing controllers would write: NamesAccepted and
 * Established true, acceptedNames, and the storage version added to storedVersions.
 */
export function establishedStatus(
  crd: JsonObject,
  previousStatus: JsonValue | undefined,
  now: string,
): JsonObject {
  const previous = obj(previousStatus);
  const conditions = Array.isArray(previous['conditions'])
    ? previous['conditions'].filter(isJsonObject)
    : [];
  const stored = strings(previous['storedVersions']);
  const storage = storageVersionOf(crd);
  if (storage !== '' && !stored.includes(storage)) stored.push(storage);
  return {
    acceptedNames: acceptedNames(crd),
    conditions: [
      condition('NamesAccepted', 'NoConflicts', 'no conflicts found', now, conditions),
      condition(
        'Established',
        'InitialNamesAccepted',
        'the initial names have been accepted',
        now,
        conditions,
      ),
    ],
    storedVersions: stored,
  };
}

function printerColumns(version: JsonObject): PrinterColumn[] {
  const columns = version['additionalPrinterColumns'];
  if (!Array.isArray(columns) || columns.length === 0) return [...defaultColumns];
  return columns.filter(isJsonObject).map((c) => {
    const column: PrinterColumn = {
      name: text(c['name'] ?? ''),
      type: text(c['type'] ?? 'string'),
      jsonPath: text(c['jsonPath'] ?? ''),
    };
    if (typeof c['description'] === 'string') column.description = c['description'];
    if (typeof c['priority'] === 'number') column.priority = c['priority'];
    if (typeof c['format'] === 'string') column.format = c['format'];
    return column;
  });
}

/**
 * kube-apiserver's warning for a deprecated CRD version without deprecationWarning:
 * "<group>/<version> <Kind> is deprecated", plus "; use <group>/<version> <Kind>" naming the
 * most preferred served, non-deprecated version that is preferred over this one, if any.
 */
function defaultDeprecationWarning(type: ResourceType, versions: readonly JsonObject[]): string {
  const message = `${type.group}/${type.version} ${type.kind} is deprecated`;
  const better = versions
    .filter((v) => v['served'] !== false && v['deprecated'] !== true)
    .map((v) => text(v['name'] ?? ''))
    .filter((name) => compareKubeVersions(name, type.version) < 0)
    .sort(compareKubeVersions);
  return better[0] === undefined
    ? message
    : `${message}; use ${type.group}/${better[0]} ${type.kind}`;
}

/**
 * A new CRD: Established (and NamesAccepted) at once. No finalizer: kube-apiserver adds
 * `customresourcecleanup.apiextensions.k8s.io` on the CRD's first delete (see api/deletion.ts).
 */
export function initializeCrd(crd: JsonObject, now: string): void {
  crd['status'] = establishedStatus(crd, undefined, now);
}

/** The resource types served for each served version of a CRD. */
export function resourceTypesOfCrd(crd: JsonObject): ResourceType[] {
  const spec = obj(crd['spec']);
  const names = acceptedNames(crd);
  const group = text(spec['group'] ?? '');
  const crdName = text(obj(crd['metadata'])['name'] ?? '');
  const storage = storageVersionOf(crd);
  const versions = Array.isArray(spec['versions']) ? spec['versions'].filter(isJsonObject) : [];
  return versions
    .filter((v) => v['served'] !== false)
    .map((version) => {
      const subresources = obj(version['subresources']);
      const scale = isJsonObject(subresources['scale']) ? subresources['scale'] : undefined;
      const schema = obj(version['schema'])['openAPIV3Schema'];
      const type: ResourceType = {
        group,
        version: text(version['name'] ?? ''),
        resource: text(names['plural']),
        kind: text(names['kind']),
        listKind: text(names['listKind']),
        singular: text(names['singular']),
        namespaced: spec['scope'] !== 'Cluster',
        shortNames: strings(names['shortNames']),
        categories: strings(names['categories']),
        verbs: ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'],
        statusSubresource: isJsonObject(subresources['status']),
        extraSubresources: [],
        hasGeneration: true,
        virtual: false,
        columns: printerColumns(version),
        crdName,
        storageVersion: storage,
      };
      if (isJsonObject(schema)) type.schema = schema;
      if (version['deprecated'] === true) {
        type.deprecationWarning =
          typeof version['deprecationWarning'] === 'string'
            ? version['deprecationWarning']
            : defaultDeprecationWarning(type, versions);
      }
      if (scale) {
        const mapping: ScaleMapping = {
          specReplicasPath: text(scale['specReplicasPath'] ?? '.spec.replicas'),
          statusReplicasPath: text(scale['statusReplicasPath'] ?? '.status.replicas'),
        };
        if (typeof scale['labelSelectorPath'] === 'string')
          mapping.labelSelectorPath = scale['labelSelectorPath'];
        type.scale = mapping;
      }
      return type;
    });
}
