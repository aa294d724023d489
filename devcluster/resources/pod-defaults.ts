// Pod spec defaults and validation shared by the kinds that hold pods or pod templates (Pod,
// Deployment, ReplicaSet, Job, CronJob), as kube's defaulting and validation do, much reduced.
import type { StatusCause } from '../../shared/kube/status.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../shared/kube/json.js';

/** The object at `parent[key]`, created empty when absent. */
export function objectAt(parent: JsonObject, key: string): JsonObject {
  const value = parent[key];
  if (isJsonObject(value)) return value;
  const fresh: JsonObject = {};
  parent[key] = fresh;
  return fresh;
}

/** A FieldValueRequired cause. */
export function required(field: string): StatusCause {
  return { type: 'FieldValueRequired', field, message: 'Required value' };
}

/** Causes for containers without a name or an image. */
export function validateContainers(spec: JsonValue | undefined, path: string): StatusCause[] {
  if (!isJsonObject(spec)) return [required(path)];
  const containers = spec['containers'];
  if (!Array.isArray(containers) || containers.length === 0)
    return [required(`${path}.containers`)];
  const causes: StatusCause[] = [];
  containers.forEach((container, i) => {
    if (
      !isJsonObject(container) ||
      typeof container['name'] !== 'string' ||
      container['name'] === ''
    ) {
      causes.push(required(`${path}.containers[${i}].name`));
    }
    if (
      isJsonObject(container) &&
      (typeof container['image'] !== 'string' || container['image'] === '')
    ) {
      causes.push(required(`${path}.containers[${i}].image`));
    }
  });
  return causes;
}

/** kube's PodSpec defaults (restartPolicy, dnsPolicy, container pull policy...). */
export function defaultPodSpec(spec: JsonObject): void {
  spec['restartPolicy'] ??= 'Always';
  spec['terminationGracePeriodSeconds'] ??= 30;
  spec['dnsPolicy'] ??= 'ClusterFirst';
  spec['schedulerName'] ??= 'default-scheduler';
  spec['securityContext'] ??= {};
  for (const container of Array.isArray(spec['containers']) ? spec['containers'] : []) {
    if (!isJsonObject(container)) continue;
    container['imagePullPolicy'] ??=
      typeof container['image'] === 'string' && container['image'].endsWith(':latest')
        ? 'Always'
        : 'IfNotPresent';
    container['terminationMessagePath'] ??= '/dev/termination-log';
    container['terminationMessagePolicy'] ??= 'File';
    container['resources'] ??= {};
    for (const port of Array.isArray(container['ports']) ? container['ports'] : []) {
      if (isJsonObject(port)) port['protocol'] ??= 'TCP';
    }
  }
}
