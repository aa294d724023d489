// What kube-apiserver 1.30's service REST storage does to a Service on create and update, in its
// order (rest.go beginCreate/beginUpdate, strategy.go PrepareForUpdate, alloc.go): keep the
// allocated values a client left out, sync clusterIP with clusterIPs, wipe what a type change
// frees, default and check the IP family fields, then allocate cluster IPs and node ports.
import type { StatusCause } from '../../shared/kube/status.js';
import { isJsonObject, text, type JsonObject } from '../../shared/kube/json.js';
import { objectAt } from './pod-defaults.js';
import {
  allocateClusterIPs,
  initIPFamilyFields,
  normalizeClusterIPs,
} from './service-ip-families.js';
import {
  allocateNodePorts,
  dropTypeDependentFields,
  patchAllocatedValues,
} from './service-node-ports.js';
import type { StrategyContext } from './types.js';

/** Prepares a Service being created (`old` undefined) or replaced; causes fail the write. */
export function prepareService(
  object: JsonObject,
  old: JsonObject | undefined,
  context: StrategyContext,
): StatusCause[] {
  const spec = objectAt(object, 'spec');
  const oldSpec = old !== undefined && isJsonObject(old['spec']) ? old['spec'] : undefined;
  const metadata = objectAt(object, 'metadata');
  const namespace = text(metadata['namespace'] ?? '');
  const name = text(metadata['name'] ?? '');
  if (oldSpec !== undefined) patchAllocatedValues(spec, oldSpec);
  normalizeClusterIPs(spec, oldSpec);
  if (oldSpec !== undefined) dropTypeDependentFields(object, spec, oldSpec);
  const families = initIPFamilyFields(spec, oldSpec, context.serviceIPFamilies);
  if (families.length > 0) return families;
  const ips = allocateClusterIPs(spec, oldSpec, context.clusterIPs, namespace, name);
  if (ips.length > 0) return ips;
  return allocateNodePorts(spec, oldSpec, context.nodePortsInUse(namespace, name));
}
