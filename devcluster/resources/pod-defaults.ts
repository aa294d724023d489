// Pod spec defaults shared by the kinds that hold pods or pod templates (Pod,
// Deployment, ReplicaSet, Job, CronJob), as kube's defaulting does (validation: validation/).
import { isJsonObject, type JsonObject } from '../../shared/kube/json.js';

/** The object at `parent[key]`, created empty when absent. */
export function objectAt(parent: JsonObject, key: string): JsonObject {
  const value = parent[key];
  if (isJsonObject(value)) return value;
  const fresh: JsonObject = {};
  parent[key] = fresh;
  return fresh;
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
