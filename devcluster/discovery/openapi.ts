// OpenAPI documents: /openapi/v3 (index and one document per group/version, with the
// group-version-kind extensions kubectl uses for explain and to detect server-side field
// validation) and /openapi/v2 (JSON, or a minimal protobuf document for clients asking for it).
import { createHash } from 'node:crypto';
import { isJsonObject, type JsonObject, type JsonValue } from '../../shared/kube/json.js';
import { apiVersionOf, type ResourceRegistry } from '../resources/registry.js';
import type { ResourceType } from '../resources/types.js';
import { builtinKindSchema, referencedComponents } from './builtin-schemas.js';

const objectMetaRef = '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

const objectMetaSchema: JsonObject = {
  description:
    'ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.',
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Name must be unique within a namespace.' },
    generateName: {
      type: 'string',
      description:
        'GenerateName is an optional prefix, used by the server, to generate a unique name.',
    },
    namespace: {
      type: 'string',
      description: 'Namespace defines the space within which each name must be unique.',
    },
    labels: {
      type: 'object',
      additionalProperties: { type: 'string', default: '' },
      description:
        'Map of string keys and values that can be used to organize and categorize objects.',
    },
    annotations: {
      type: 'object',
      additionalProperties: { type: 'string', default: '' },
      description: 'Annotations is an unstructured key value map stored with a resource.',
    },
    uid: { type: 'string' },
    resourceVersion: { type: 'string' },
    generation: { type: 'integer', format: 'int64' },
    creationTimestamp: { type: 'string', format: 'date-time' },
    deletionTimestamp: { type: 'string', format: 'date-time' },
    deletionGracePeriodSeconds: { type: 'integer', format: 'int64' },
    finalizers: {
      type: 'array',
      items: { type: 'string', default: '' },
      'x-kubernetes-list-type': 'set',
    },
    ownerReferences: {
      type: 'array',
      items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      'x-kubernetes-patch-merge-key': 'uid',
      'x-kubernetes-patch-strategy': 'merge',
    },
    managedFields: {
      type: 'array',
      items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
  },
};

/** The schema name kube uses: io.k8s.api.<group>.<version>.<Kind> for built-ins, reversed group for CRDs. */
export function schemaName(type: ResourceType): string {
  if (type.crdName !== undefined) {
    return `${type.group.split('.').reverse().join('.')}.${type.version}.${type.kind}`;
  }
  const group =
    type.group === '' ? 'core' : type.group.replace(/\.k8s\.io$/, '').replace(/\./g, '');
  const base = type.group.endsWith('apiextensions.k8s.io')
    ? 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions'
    : type.group === 'apiregistration.k8s.io'
      ? 'io.k8s.kube-aggregator.pkg.apis.apiregistration'
      : `io.k8s.api.${group}`;
  return `${base}.${type.version}.${type.kind}`;
}

function gvkExtension(type: ResourceType): JsonValue {
  return [{ group: type.group, version: type.version, kind: type.kind }];
}

function resourceSchema(type: ResourceType): JsonObject {
  const base: JsonObject =
    type.schema !== undefined
      ? structuredClone(type.schema)
      : (builtinKindSchema(schemaName(type)) ?? {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
        });
  const properties = isJsonObject(base['properties']) ? base['properties'] : {};
  base['properties'] = {
    ...properties,
    apiVersion: {
      type: 'string',
      description: 'APIVersion defines the versioned schema of this representation of an object.',
    },
    kind: {
      type: 'string',
      description: 'Kind is a string value representing the REST resource this object represents.',
    },
    metadata: {
      allOf: [{ $ref: objectMetaRef }],
      default: {},
      description: "Standard object's metadata.",
    },
  };
  base['type'] = 'object';
  base['x-kubernetes-group-version-kind'] = gvkExtension(type);
  if (base['description'] === undefined)
    base['description'] = `${type.kind} (${apiVersionOf(type.group, type.version)}).`;
  return base;
}

function queryParameter(
  name: string,
  description: string,
  type: 'string' | 'boolean' = 'string',
): JsonObject {
  return { name, in: 'query', description, schema: { type, uniqueItems: true } };
}

/**
 * The patch types a PATCH operation lists. kube-apiserver lists strategic merge patch for
 * built-in kinds (not for custom resources), and kubectl 1.29+ `apply` then builds its patch
 * from the kind's /openapi/v3 schema (kubectl/pkg/cmd/apply/patcher.go). The devcluster's
 * built-in schemas are partial (builtin-schemas.ts), so a field missing from them would make
 * kubectl warn "error calculating patch from openapi v3 spec" on every apply. Listing no
 * strategic merge patch sends kubectl to its compiled-in types instead, which build the same
 * strategic merge patch without a warning; the server still accepts one for built-in kinds.
 */
function patchContentTypes(): string[] {
  return [
    'application/apply-patch+yaml',
    'application/json-patch+json',
    'application/merge-patch+json',
  ];
}

function operation(
  type: ResourceType,
  action: string,
  id: string,
  ref: string,
  withPatchParams: boolean,
): JsonObject {
  const op: JsonObject = {
    operationId: id,
    tags: [apiVersionOf(type.group, type.version)],
    responses: {
      '200': { description: 'OK', content: { 'application/json': { schema: { $ref: ref } } } },
    },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': {
      group: type.group,
      version: type.version,
      kind: type.kind,
    },
  };
  if (withPatchParams) {
    op['parameters'] = [
      queryParameter(
        'dryRun',
        'When present, indicates that modifications should not be persisted.',
      ),
      queryParameter(
        'fieldManager',
        'fieldManager is a name associated with the actor or entity that is making these changes.',
      ),
      queryParameter(
        'fieldValidation',
        'fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields.',
      ),
    ];
    if (action === 'patch')
      op['parameters'].push(
        queryParameter('force', 'Force is going to "force" Apply requests.', 'boolean'),
      );
  }
  if (action === 'patch') {
    op['requestBody'] = {
      content: Object.fromEntries(
        patchContentTypes().map((ct) => [ct, { schema: { type: 'object' } }]),
      ),
      required: true,
    };
  }
  return op;
}

/** OpenAPI v3 document of one group/version. */
export function openApiV3Document(
  registry: ResourceRegistry,
  group: string,
  version: string,
  kubernetesVersion: string,
): JsonObject | undefined {
  const types = registry
    .all()
    .filter((t) => t.group === group && t.version === version && !t.virtual);
  const virtual = registry
    .all()
    .filter((t) => t.group === group && t.version === version && t.virtual);
  if (types.length === 0 && virtual.length === 0) return undefined;
  const prefix = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
  const schemas: JsonObject = {
    'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': objectMetaSchema,
  };
  const paths: JsonObject = {};
  for (const type of [...types, ...virtual]) {
    const name = schemaName(type);
    const ref = `#/components/schemas/${name}`;
    schemas[name] = resourceSchema(type);
    const collection = type.namespaced
      ? `${prefix}/namespaces/{namespace}/${type.resource}`
      : `${prefix}/${type.resource}`;
    const id = `${type.kind}${type.version}`;
    paths[collection] = {
      get: operation(type, 'list', `list${id}`, ref, false),
      post: operation(type, 'post', `create${id}`, ref, true),
    };
    if (type.virtual) continue;
    paths[`${collection}/{name}`] = {
      get: operation(type, 'get', `read${id}`, ref, false),
      put: operation(type, 'put', `replace${id}`, ref, true),
      patch: operation(type, 'patch', `patch${id}`, ref, true),
      delete: operation(type, 'delete', `delete${id}`, ref, false),
    };
    if (type.statusSubresource) {
      paths[`${collection}/{name}/status`] = {
        get: operation(type, 'get', `read${id}Status`, ref, false),
        put: operation(type, 'put', `replace${id}Status`, ref, true),
        patch: operation(type, 'patch', `patch${id}Status`, ref, true),
      };
    }
  }
  const kindSchemas = Object.values(schemas).filter(isJsonObject);
  Object.assign(schemas, referencedComponents(kindSchemas));
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: kubernetesVersion },
    paths,
    components: { schemas },
  };
}

/** Content hash used in serverRelativeURL so clients refetch when a document changes. */
export function documentHash(document: JsonObject): string {
  return createHash('sha512')
    .update(JSON.stringify(document))
    .digest('hex')
    .slice(0, 128)
    .toUpperCase();
}

/** The /openapi/v3 index: one entry per served group/version. */
export function openApiV3Index(registry: ResourceRegistry, kubernetesVersion: string): JsonObject {
  const paths: JsonObject = {};
  for (const { group, versions } of registry.groups()) {
    for (const version of versions) {
      const document = openApiV3Document(registry, group, version, kubernetesVersion);
      if (!document) continue;
      const path = group === '' ? `api/${version}` : `apis/${group}/${version}`;
      paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${documentHash(document)}` };
    }
  }
  return { paths };
}

/** Swagger 2.0 document (JSON) with every served kind's schema as a definition. */
export function openApiV2Document(
  registry: ResourceRegistry,
  kubernetesVersion: string,
): JsonObject {
  const schemas: Record<string, JsonObject> = {};
  for (const type of registry.all()) schemas[schemaName(type)] = resourceSchema(type);
  Object.assign(schemas, referencedComponents(Object.values(schemas), 'v2'));
  const definitions: JsonObject = {};
  for (const [name, schema] of Object.entries(schemas))
    definitions[name] = JSON.parse(
      JSON.stringify(schema).replaceAll('#/components/schemas/', '#/definitions/'),
    ) as JsonObject;
  definitions['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'] = objectMetaSchema;
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: kubernetesVersion },
    paths: {},
    definitions,
  };
}

function varint(n: number): number[] {
  const bytes: number[] = [];
  let value = n;
  while (value > 127) {
    bytes.push((value & 127) | 128);
    value >>>= 7;
  }
  bytes.push(value);
  return bytes;
}

function lengthDelimited(field: number, payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...varint(payload.length)]), payload]);
}

/**
 * A minimal openapi_v2.Document in protobuf (swagger "2.0" and info only). client-go parses
 * /openapi/v2 as protobuf; with no definitions, kubectl falls back to its built-in knowledge.
 */
export function openApiV2Protobuf(kubernetesVersion: string): Buffer {
  const info = Buffer.concat([
    lengthDelimited(1, Buffer.from('Kubernetes')),
    lengthDelimited(2, Buffer.from(kubernetesVersion)),
  ]);
  return Buffer.concat([lengthDelimited(1, Buffer.from('2.0')), lengthDelimited(2, info)]);
}
