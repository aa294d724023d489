// kube-apiserver 1.30's defaulting of Deployments and Services (SetDefaults_Deployment,
// SetDefaults_Service), applied on create and on every update alike.
import { isJsonObject, type JsonObject } from '../../shared/kube/json.js';
import { defaultPodSpec, objectAt } from './pod-defaults.js';

/** Pod spec defaults of `spec.template.spec`, when there is one. */
export function defaultTemplate(spec: JsonObject): void {
  const template = objectAt(spec, 'template');
  if (isJsonObject(template['spec'])) defaultPodSpec(template['spec']);
}

/** SetDefaults_Deployment (apps/v1): replicas, strategy, history and progress deadline. */
export function defaultDeployment(object: JsonObject): void {
  const spec = objectAt(object, 'spec');
  spec['replicas'] ??= 1;
  const strategy = objectAt(spec, 'strategy');
  if ((strategy['type'] ?? '') === '') strategy['type'] = 'RollingUpdate';
  if (strategy['type'] === 'RollingUpdate') {
    const rollingUpdate = objectAt(strategy, 'rollingUpdate');
    rollingUpdate['maxUnavailable'] ??= '25%';
    rollingUpdate['maxSurge'] ??= '25%';
  }
  spec['revisionHistoryLimit'] ??= 10;
  spec['progressDeadlineSeconds'] ??= 600;
  defaultTemplate(spec);
}

const trafficPolicyTypes = new Set(['ClusterIP', 'NodePort', 'LoadBalancer']);

/** SetDefaults_Service (core/v1). */
export function defaultService(object: JsonObject): void {
  const spec = objectAt(object, 'spec');
  if ((spec['sessionAffinity'] ?? '') === '') spec['sessionAffinity'] = 'None';
  if (spec['sessionAffinity'] === 'None') delete spec['sessionAffinityConfig'];
  if (spec['sessionAffinity'] === 'ClientIP') {
    const config = spec['sessionAffinityConfig'];
    const clientIP = isJsonObject(config) ? config['clientIP'] : undefined;
    if (!isJsonObject(clientIP) || typeof clientIP['timeoutSeconds'] !== 'number')
      spec['sessionAffinityConfig'] = { clientIP: { timeoutSeconds: 10800 } };
  }
  if ((spec['type'] ?? '') === '') spec['type'] = 'ClusterIP';
  const type = spec['type'];
  for (const port of Array.isArray(spec['ports']) ? spec['ports'] : []) {
    if (!isJsonObject(port)) continue;
    if ((port['protocol'] ?? '') === '') port['protocol'] = 'TCP';
    const target = port['targetPort'];
    if (target === undefined || target === null || target === 0 || target === '')
      port['targetPort'] = port['port'] ?? 0;
  }
  if ((type === 'NodePort' || type === 'LoadBalancer') && !spec['externalTrafficPolicy'])
    spec['externalTrafficPolicy'] = 'Cluster';
  if (typeof type === 'string' && trafficPolicyTypes.has(type))
    spec['internalTrafficPolicy'] ??= 'Cluster';
  if (type === 'LoadBalancer') spec['allocateLoadBalancerNodePorts'] ??= true;
}
