// The /scale subresource: an autoscaling/v1 Scale read from, and written to, the replicas (and
// selector) fields the type maps it onto (Deployments, ReplicaSets, CRDs' subresources.scale).
import type { ApiCore } from '../../../api/core.js';
import { ApiError } from '../../../api/errors.js';
import type { WriteOptions } from '../../../api/types.js';
import type { ResourceType } from '../../../resources/types.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../../../shared/kube/json.js';
import { sendJson } from '../answers.js';
import type { ResourceRequest } from '../types.js';

function jsonPathGet(object: JsonObject, path: string): JsonValue | undefined {
  let current: JsonValue | undefined = object;
  for (const part of path.split('.').filter((p) => p !== '')) {
    if (!isJsonObject(current)) return undefined;
    current = current[part];
  }
  return current;
}

/** The Scale of an object. */
export function scaleOf(type: ResourceType, object: JsonObject): JsonObject {
  const mapping = type.scale;
  const m = object['metadata'] as JsonObject;
  const replicas = mapping ? jsonPathGet(object, mapping.specReplicasPath) : undefined;
  const statusReplicas = mapping ? jsonPathGet(object, mapping.statusReplicasPath) : undefined;
  const selector =
    mapping?.labelSelectorPath !== undefined
      ? jsonPathGet(object, mapping.labelSelectorPath)
      : undefined;
  const status: JsonObject = {
    replicas: typeof statusReplicas === 'number' ? statusReplicas : 0,
  };
  if (typeof selector === 'string') status['selector'] = selector;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: m['name'] ?? '',
      namespace: m['namespace'] ?? '',
      uid: m['uid'] ?? '',
      resourceVersion: m['resourceVersion'] ?? '',
      creationTimestamp: m['creationTimestamp'] ?? null,
    },
    spec: { replicas: typeof replicas === 'number' ? replicas : 0 },
    status,
  };
}

/** Writes a Scale's replicas onto the object (its resourceVersion a precondition when set). */
function setScale(
  core: ApiCore,
  type: ResourceType,
  namespace: string,
  name: string,
  scale: JsonObject,
  opts: WriteOptions,
): JsonObject {
  const mapping = type.scale;
  if (!mapping) throw new ApiError('NotFound', 'the server could not find the requested resource');
  const object = structuredClone(core.get(type, namespace, name));
  const spec = isJsonObject(scale['spec']) ? scale['spec'] : {};
  const parts = mapping.specReplicasPath.split('.').filter((p) => p !== '');
  let target: JsonObject = object;
  for (const part of parts.slice(0, -1)) {
    const next = target[part];
    if (isJsonObject(next)) target = next;
    else target = target[part] = {};
  }
  target[parts[parts.length - 1] ?? 'replicas'] =
    typeof spec['replicas'] === 'number' ? spec['replicas'] : 0;
  const m = isJsonObject(scale['metadata']) ? scale['metadata'] : {};
  (object['metadata'] as JsonObject)['resourceVersion'] =
    typeof m['resourceVersion'] === 'string' ? m['resourceVersion'] : '';
  return core.update(type, namespace, name, object, opts);
}

/** Answers PUT /scale with the new Scale. */
export async function updateScale(
  request: ResourceRequest,
  body: JsonObject,
  opts: WriteOptions,
): Promise<void> {
  const { res, type, namespace, name, server } = request;
  const { core } = server;
  const updated = setScale(core, type, namespace, name, body, opts);
  if (core.store.journal) await core.store.flushed();
  sendJson(res, 200, scaleOf(type, updated));
}

/** Answers PATCH /scale (a merge of the patch's spec) with the new Scale. */
export async function patchScale(
  request: ResourceRequest,
  raw: Buffer,
  opts: WriteOptions,
): Promise<void> {
  const { res, type, namespace, name, server } = request;
  const { core } = server;
  const current = scaleOf(type, core.get(type, namespace, name));
  const patch = JSON.parse(raw.toString('utf8')) as JsonValue;
  const spec = isJsonObject(patch) && isJsonObject(patch['spec']) ? patch['spec'] : {};
  const updated = setScale(
    core,
    type,
    namespace,
    name,
    { ...current, spec: { ...(current['spec'] as JsonObject), ...spec } },
    opts,
  );
  if (core.store.journal) await core.store.flushed();
  sendJson(res, 200, scaleOf(type, updated));
}
