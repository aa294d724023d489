// Services as kube 1.30's ValidateService and ValidateServiceUpdate check them (after the
// defaults and the cluster IP allocation): ports, type, selector, cluster IPs.
import { isIP } from 'node:net';
import { isJsonObject, type JsonObject, type JsonValue } from '../../../shared/kube/json.js';
import type { StatusCause } from '../../../shared/kube/status.js';
import { protocolCauses } from './containers.js';
import {
  duplicate,
  forbidden,
  goQuote,
  goStrings,
  invalid,
  invalidEach,
  notSupported,
  required,
} from './field.js';
import { dns1123LabelErrors, dns1123SubdomainErrors, portNumberErrors } from './identifiers.js';
import { validateLabels } from './meta.js';
import { portNumOrNameCauses } from './probes.js';

/** The service node port range of a default kube-apiserver (--service-node-port-range). */
export const nodePortRange = { min: 30000, max: 32767 } as const;

const serviceTypes = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];

function textOf(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

function portsOf(spec: JsonObject): JsonObject[] {
  const ports = spec['ports'];
  return (Array.isArray(ports) ? ports : []).map((p) => (isJsonObject(p) ? p : {}));
}

function clusterIPsOf(spec: JsonObject): string[] {
  const ips = spec['clusterIPs'];
  return Array.isArray(ips) ? ips.map((ip) => textOf(ip)) : [];
}

function isHeadless(spec: JsonObject): boolean {
  const ips = clusterIPsOf(spec);
  return spec['type'] === 'ClusterIP' && ips.length === 1 && ips[0] === 'None';
}

/** Go's %#v of the core.ServicePort key kube reports a duplicate port+protocol with. */
function goServicePortKey(protocol: string, port: number): string {
  return `core.ServicePort{Name:"", Protocol:${goQuote(protocol)}, AppProtocol:(*string)(nil), Port:${port}, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`;
}

/** validateServicePort: name (required with several ports), port, protocol, targetPort. */
function servicePortCauses(
  port: JsonObject,
  path: string,
  requireName: boolean,
  names: Set<string>,
): StatusCause[] {
  const causes: StatusCause[] = [];
  const name = textOf(port['name']);
  if (requireName && name === '') {
    causes.push(required(`${path}.name`));
  } else if (name !== '') {
    causes.push(...invalidEach(`${path}.name`, name, dns1123LabelErrors(name)));
    if (names.has(name)) causes.push(duplicate(`${path}.name`, name));
    else names.add(name);
  }
  const number = typeof port['port'] === 'number' ? port['port'] : 0;
  causes.push(...invalidEach(`${path}.port`, number, portNumberErrors(number)));
  causes.push(...protocolCauses(port['protocol'], `${path}.protocol`));
  causes.push(...portNumOrNameCauses(port['targetPort'], `${path}.targetPort`));
  return causes;
}

function clusterIPCauses(spec: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  clusterIPsOf(spec).forEach((ip, i, all) => {
    if (ip === 'None' && i === 0 && all.length === 1) return;
    if (ip === 'None') {
      causes.push(invalid(`spec.clusterIPs[${i}]`, ip, "'None' must be the first and only value"));
    } else if (isIP(ip) === 0) {
      causes.push(
        invalid(
          `spec.clusterIPs[${i}]`,
          ip,
          'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
        ),
      );
    }
  });
  return causes;
}

function externalNameCauses(spec: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  if (clusterIPsOf(spec).length > 0)
    causes.push(forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
  const cname = textOf(spec['externalName']).replace(/\.$/, '');
  if (cname === '') causes.push(required('spec.externalName'));
  else causes.push(...invalidEach('spec.externalName', cname, dns1123SubdomainErrors(cname)));
  return causes;
}

/** ValidateService (spec part). */
export function validateService(object: JsonObject): StatusCause[] {
  const spec = isJsonObject(object['spec']) ? object['spec'] : {};
  const type = textOf(spec['type']);
  const ports = portsOf(spec);
  const causes: StatusCause[] = [];
  if (ports.length === 0 && !isHeadless(spec) && type !== 'ExternalName')
    causes.push(required('spec.ports'));
  if (type === 'ExternalName') causes.push(...externalNameCauses(spec));
  else causes.push(...clusterIPCauses(spec));
  const names = new Set<string>();
  ports.forEach((port, i) => {
    causes.push(...servicePortCauses(port, `spec.ports[${i}]`, ports.length > 1, names));
  });
  causes.push(...validateLabels(spec['selector'], 'spec.selector'));
  const affinity = textOf(spec['sessionAffinity']);
  if (affinity === '') causes.push(required('spec.sessionAffinity'));
  else if (affinity !== 'ClientIP' && affinity !== 'None')
    causes.push(notSupported('spec.sessionAffinity', affinity, ['ClientIP', 'None']));
  if (type === '') causes.push(required('spec.type'));
  else if (!serviceTypes.includes(type)) causes.push(notSupported('spec.type', type, serviceTypes));
  causes.push(...nodePortCauses(ports, type));
  const seen = new Set<string>();
  ports.forEach((port, i) => {
    const protocol = textOf(port['protocol']);
    const number = typeof port['port'] === 'number' ? port['port'] : 0;
    const key = `${protocol}/${number}`;
    if (seen.has(key))
      causes.push(duplicate(`spec.ports[${i}]`, { goSyntax: goServicePortKey(protocol, number) }));
    seen.add(key);
  });
  return causes;
}

/** No nodePort on ClusterIP Services; node ports unique per protocol and in the node port range. */
function nodePortCauses(ports: readonly JsonObject[], type: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  ports.forEach((port, i) => {
    const nodePort = port['nodePort'];
    if (typeof nodePort !== 'number' || nodePort === 0) return;
    const at = `spec.ports[${i}].nodePort`;
    if (type === 'ClusterIP') {
      causes.push(forbidden(at, "may not be used when `type` is 'ClusterIP'"));
      return;
    }
    const key = `${textOf(port['protocol'])}/${nodePort}`;
    if (seen.has(key)) causes.push(duplicate(at, nodePort));
    seen.add(key);
    // The allocator's answer, which kube sends as a validation error too.
    if (nodePort < nodePortRange.min || nodePort > nodePortRange.max) {
      causes.push(
        invalid(
          at,
          nodePort,
          `provided port is not in the valid range. The range of valid ports is ${nodePortRange.min}-${nodePortRange.max}`,
        ),
      );
    }
  });
  return causes;
}

/**
 * ValidateServiceUpdate's cluster IP rule: the primary cluster IP may not change (unless the
 * Service is or becomes ExternalName, or stays headless).
 */
export function validateServiceUpdate(object: JsonObject, old: JsonObject): StatusCause[] {
  const spec = isJsonObject(object['spec']) ? object['spec'] : {};
  const oldSpec = isJsonObject(old['spec']) ? old['spec'] : {};
  if (spec['type'] === 'ExternalName' || oldSpec['type'] === 'ExternalName') return [];
  if (isHeadless(spec) && isHeadless(oldSpec)) return [];
  const ips = clusterIPsOf(spec);
  const oldIPs = clusterIPsOf(oldSpec);
  // A changed clusterIP beside unchanged clusterIPs counts as a change of the first (kube's
  // NormalizeClusterIPs).
  const singular = textOf(spec['clusterIP']);
  if (singular !== '' && ips.length > 0 && singular !== textOf(oldSpec['clusterIP']))
    ips[0] = singular;
  const causes: StatusCause[] = [];
  if (oldIPs.length > 0 && ips.length === 0) {
    causes.push(
      invalid('spec.clusterIPs[0]', goStrings(undefined), 'primary clusterIP can not be unset'),
    );
  }
  const common = Math.min(ips.length, oldIPs.length);
  for (let i = 0; i < common; i++) {
    if (ips[i] !== oldIPs[i])
      causes.push(invalid(`spec.clusterIPs[${i}]`, goStrings(ips), 'may not change once set'));
  }
  return causes;
}
