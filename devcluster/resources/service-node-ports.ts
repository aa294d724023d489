// Node ports and the allocated values of Services on update, as kube-apiserver 1.30's service
// storage handles them (pkg/registry/core/service/storage/alloc.go initNodePorts and
// updateNodePorts, rest.go patchAllocatedValues, strategy.go dropTypeDependentFields).
import { randomInt } from 'node:crypto';
import type { StatusCause } from '../../shared/kube/status.js';
import { isJsonObject, text, type JsonObject } from '../../shared/kube/json.js';

/** kube-apiserver's default --service-node-port-range. */
export const nodePortRange = { first: 30000, last: 32767 } as const;

function ports(spec: JsonObject): JsonObject[] {
  return Array.isArray(spec['ports']) ? spec['ports'].filter(isJsonObject) : [];
}

function nodePortOf(port: JsonObject): number {
  return typeof port['nodePort'] === 'number' ? port['nodePort'] : 0;
}

/** The node ports a Service holds. */
export function nodePortsOf(spec: JsonObject): number[] {
  return ports(spec)
    .map(nodePortOf)
    .filter((p) => p !== 0);
}

function needsNodePort(spec: JsonObject): boolean {
  return spec['type'] === 'NodePort' || spec['type'] === 'LoadBalancer';
}

function needsClusterIP(spec: JsonObject): boolean {
  return spec['type'] !== 'ExternalName';
}

/** Whether new node ports are handed out (a LoadBalancer may opt out). */
function shouldAllocateNodePorts(spec: JsonObject): boolean {
  if (spec['type'] === 'NodePort') return true;
  return spec['type'] === 'LoadBalancer' && spec['allocateLoadBalancerNodePorts'] !== false;
}

/**
 * patchAllocatedValues: an update that leaves out what the server allocated (a PUT of a
 * manifest, an apply) keeps it: the cluster IPs, and each port's node port, matched by port name.
 */
export function patchAllocatedValues(spec: JsonObject, old: JsonObject): void {
  if (needsClusterIP(old) && needsClusterIP(spec)) {
    if ((spec['clusterIP'] ?? '') === '' && old['clusterIP'] !== undefined)
      spec['clusterIP'] = old['clusterIP'];
    const ips = spec['clusterIPs'];
    if ((!Array.isArray(ips) || ips.length === 0) && Array.isArray(old['clusterIPs']))
      spec['clusterIPs'] = structuredClone(old['clusterIPs']);
  }
  if (!needsNodePort(old) || !needsNodePort(spec)) return;
  const newPorts = new Set(nodePortsOf(spec));
  const used = new Set(nodePortsOf(old).filter((p) => newPorts.has(p)));
  const byName = new Map(ports(old).map((p) => [text(p['name']), nodePortOf(p)]));
  for (const port of ports(spec)) {
    if (nodePortOf(port) !== 0) continue;
    const previous = byName.get(text(port['name'])) ?? 0;
    if (previous !== 0 && !used.has(previous)) port['nodePort'] = previous;
  }
  if (
    typeof old['healthCheckNodePort'] === 'number' &&
    (spec['healthCheckNodePort'] ?? 0) === 0 &&
    spec['externalTrafficPolicy'] === 'Local' &&
    spec['type'] === 'LoadBalancer'
  )
    spec['healthCheckNodePort'] = old['healthCheckNodePort'];
}

/**
 * dropTypeDependentFields: a type change wipes what the old type had allocated when the client
 * sent it back unchanged (cluster IPs and families for ExternalName, node ports for ClusterIP).
 */
export function dropTypeDependentFields(
  object: JsonObject,
  spec: JsonObject,
  old: JsonObject,
): void {
  const same = (key: string): boolean =>
    JSON.stringify(spec[key] ?? null) === JSON.stringify(old[key] ?? null);
  if (needsClusterIP(old) && !needsClusterIP(spec)) {
    if (same('clusterIPs')) {
      delete spec['clusterIP'];
      delete spec['clusterIPs'];
    }
    if (same('ipFamilies')) delete spec['ipFamilies'];
    if (same('ipFamilyPolicy')) delete spec['ipFamilyPolicy'];
  }
  const sameNodePorts =
    JSON.stringify(ports(spec).map(nodePortOf)) === JSON.stringify(ports(old).map(nodePortOf));
  if (needsNodePort(old) && !needsNodePort(spec) && sameNodePorts)
    for (const port of ports(spec)) delete port['nodePort'];
  if (old['type'] === 'LoadBalancer' && spec['type'] !== 'LoadBalancer') {
    if (same('allocateLoadBalancerNodePorts')) delete spec['allocateLoadBalancerNodePorts'];
    if (same('healthCheckNodePort')) delete spec['healthCheckNodePort'];
  }
  const externallyAccessible = (s: JsonObject): boolean =>
    needsNodePort(s) ||
    (s['type'] === 'ClusterIP' && Array.isArray(s['externalIPs']) && s['externalIPs'].length > 0);
  if (externallyAccessible(old) && !externallyAccessible(spec) && same('externalTrafficPolicy'))
    delete spec['externalTrafficPolicy'];
  if (spec['type'] !== 'LoadBalancer') object['status'] = { loadBalancer: {} };
}

/**
 * Gives each port of a NodePort or LoadBalancer Service a node port (a random free one, or the
 * one requested); ports sharing a port number share the node port. `inUse` holds the node ports
 * of every other Service; a clash answers kube's field error.
 */
export function allocateNodePorts(
  spec: JsonObject,
  old: JsonObject | undefined,
  inUse: ReadonlySet<number>,
): StatusCause[] {
  if (!needsNodePort(spec)) return [];
  const mine = new Set(old === undefined ? [] : nodePortsOf(old));
  const taken = new Set(inUse);
  const byServicePort = new Map<number, number>();
  for (const [i, port] of ports(spec).entries()) {
    const requested = nodePortOf(port);
    if (requested === 0 && !shouldAllocateNodePorts(spec)) continue;
    const servicePort = typeof port['port'] === 'number' ? port['port'] : -1;
    if (requested === 0) {
      const shared = byServicePort.get(servicePort);
      const chosen = shared ?? nextFree(taken);
      if (chosen === undefined) return [];
      port['nodePort'] = chosen;
      taken.add(chosen);
      byServicePort.set(servicePort, chosen);
      continue;
    }
    byServicePort.set(servicePort, requested);
    const field = `spec.ports[${i}].nodePort`;
    if (requested < nodePortRange.first || requested > nodePortRange.last) {
      const message = `provided port is not in the valid range. The range of valid ports is ${nodePortRange.first}-${nodePortRange.last}`;
      return [
        { type: 'FieldValueInvalid', field, message: `Invalid value: ${requested}: ${message}` },
      ];
    }
    if (!mine.has(requested) && inUse.has(requested)) {
      const message = 'provided port is already allocated';
      return [
        { type: 'FieldValueInvalid', field, message: `Invalid value: ${requested}: ${message}` },
      ];
    }
    taken.add(requested);
  }
  return [];
}

/** A random free port of the range, as kube's allocator picks one; undefined when full. */
function nextFree(taken: ReadonlySet<number>): number | undefined {
  const size = nodePortRange.last - nodePortRange.first + 1;
  const start = randomInt(size);
  for (let i = 0; i < size; i++) {
    const port = nodePortRange.first + ((start + i) % size);
    if (!taken.has(port)) return port;
  }
  return undefined;
}
