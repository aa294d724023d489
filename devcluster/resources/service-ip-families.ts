// A Service's IP family fields as kube-apiserver 1.30's service REST storage sets and checks
// them (pkg/registry/core/service/storage/alloc.go initIPFamilyFields, rest.go
// normalizeClusterIPs, and validation's ValidateServiceClusterIPsRelatedFields), for a cluster
// whose service CIDRs cover the configured families (IPv4 only unless configured).
import { isIP } from 'node:net';
import type { StatusCause } from '../../shared/kube/status.js';
import { isJsonObject, text, type JsonObject, type JsonValue } from '../../shared/kube/json.js';
import type { ClusterIPAllocator, IPFamily } from './types.js';

const policies = ['PreferDualStack', 'RequireDualStack', 'SingleStack'];

/** Go's %#v of a string slice, as field.Invalid prints one. */
export function goStrings(values: readonly JsonValue[], type = '[]string'): string {
  return `${type}{${values.map((v) => JSON.stringify(text(v))).join(', ')}}`;
}

function strings(value: JsonValue | undefined): string[] {
  return Array.isArray(value) ? value.map((v) => text(v)) : [];
}

function familyOf(ip: string): IPFamily {
  return isIP(ip) === 6 ? 'IPv6' : 'IPv4';
}

function other(family: IPFamily): IPFamily {
  return family === 'IPv4' ? 'IPv6' : 'IPv4';
}

function invalid(field: string, value: string, message: string): StatusCause {
  return { type: 'FieldValueInvalid', field, message: `Invalid value: ${value}: ${message}` };
}

function sameList(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  return JSON.stringify(strings(a)) === JSON.stringify(strings(b));
}

/** Whether the Service is headless without a selector (kube defaults those to dual-stack). */
function headlessSelectorless(spec: JsonObject): boolean {
  const selector = spec['selector'];
  const empty = !isJsonObject(selector) || Object.keys(selector).length === 0;
  return spec['clusterIP'] === 'None' && empty;
}

/** normalizeClusterIPs: keeps clusterIP and clusterIPs in step for clients that set only one. */
export function normalizeClusterIPs(spec: JsonObject, old: JsonObject | undefined): void {
  const clusterIP = typeof spec['clusterIP'] === 'string' ? spec['clusterIP'] : '';
  if (old === undefined) {
    if (clusterIP !== '' && strings(spec['clusterIPs']).length === 0)
      spec['clusterIPs'] = [clusterIP];
    return;
  }
  const oldIPs = strings(old['clusterIPs']);
  if (oldIPs.length > 0 && strings(spec['clusterIPs']).length === 0) {
    if ((old['clusterIP'] ?? '') === clusterIP) spec['clusterIPs'] = [...oldIPs];
  }
  if ((old['clusterIP'] ?? '') !== clusterIP && sameList(old['clusterIPs'], spec['clusterIPs'])) {
    if (clusterIP === '') delete spec['clusterIPs'];
    else spec['clusterIPs'] = [clusterIP];
  }
}

/** ValidateServiceClusterIPsRelatedFields, the checks run before families are defaulted. */
function validateRelatedFields(spec: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const clusterIP = typeof spec['clusterIP'] === 'string' ? spec['clusterIP'] : '';
  const ips = strings(spec['clusterIPs']);
  if (clusterIP !== '') {
    if (ips.length === 0)
      causes.push({
        type: 'FieldValueRequired',
        field: 'spec.clusterIPs',
        message: 'Required value',
      });
    else if (ips[0] !== clusterIP)
      causes.push(invalid('spec.clusterIPs', goStrings(ips), 'first value must match `clusterIP`'));
  } else if (ips.length > 0) {
    const message = 'must be empty when `clusterIP` is not specified';
    causes.push(invalid('spec.clusterIPs', goStrings(ips), message));
  }
  const seen = new Set<string>();
  strings(spec['ipFamilies']).forEach((family, i) => {
    const field = `spec.ipFamilies[${i}]`;
    if (family !== 'IPv4' && family !== 'IPv6') {
      const message = `Unsupported value: ${JSON.stringify(family)}: supported values: "IPv4", "IPv6"`;
      causes.push({ type: 'FieldValueNotSupported', field, message });
    }
    if (seen.has(family))
      causes.push({
        type: 'FieldValueDuplicate',
        field,
        message: `Duplicate value: ${JSON.stringify(family)}`,
      });
    seen.add(family);
  });
  const policy = spec['ipFamilyPolicy'];
  if (policy !== undefined && policy !== null && !policies.includes(text(policy))) {
    const message = `Unsupported value: ${JSON.stringify(policy)}: supported values: ${policies.map((p) => `"${p}"`).join(', ')}`;
    causes.push({ type: 'FieldValueNotSupported', field: 'spec.ipFamilyPolicy', message });
  }
  let badIPs = false;
  ips.forEach((ip, i) => {
    if (i === 0 && ip === 'None') {
      if (ips.length > 1) {
        badIPs = true;
        const message = "'None' must be the first and only value";
        causes.push(invalid('spec.clusterIPs', goStrings(ips), message));
      }
      return;
    }
    if (isIP(ip) === 0) {
      badIPs = true;
      const message = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
      causes.push(invalid(`spec.clusterIPs[${i}]`, JSON.stringify(ip), message));
    }
  });
  if (ips.length > 2)
    causes.push(invalid('spec.clusterIPs', goStrings(ips), 'may only hold up to 2 values'));
  if (badIPs) return causes;
  if (ips.length === 2 && familyOf(ips[0] ?? '') === familyOf(ips[1] ?? '')) {
    const message = 'may specify no more than one IP for each IP family';
    causes.push(invalid('spec.clusterIPs', goStrings(ips), message));
  }
  const families = strings(spec['ipFamilies']);
  if (ips[0] !== 'None') {
    ips.forEach((ip, i) => {
      const family = families[i];
      if (family === undefined || family === familyOf(ip)) return;
      const message = `expected an ${family} value as indicated by \`ipFamilies[${i}]\``;
      causes.push(invalid(`spec.clusterIPs[${i}]`, JSON.stringify(ip), message));
    });
  }
  return causes;
}

/**
 * initIPFamilyFields: defaults ipFamilyPolicy (the old one on update; RequireDualStack for a
 * headless Service without selector; else SingleStack) and ipFamilies (from the cluster IPs,
 * else the cluster's first family), refusing families the cluster lacks.
 */
export function initIPFamilyFields(
  spec: JsonObject,
  old: JsonObject | undefined,
  configured: readonly IPFamily[],
): StatusCause[] {
  if (spec['type'] === 'ExternalName') return [];
  if (spec['ipFamilyPolicy'] === undefined || spec['ipFamilyPolicy'] === null) {
    if (old !== undefined && typeof old['ipFamilyPolicy'] === 'string')
      spec['ipFamilyPolicy'] = old['ipFamilyPolicy'];
    else spec['ipFamilyPolicy'] = headlessSelectorless(spec) ? 'RequireDualStack' : 'SingleStack';
  }
  const related = validateRelatedFields(spec);
  if (related.length > 0) return related;
  const policy = spec['ipFamilyPolicy'];
  const policyText = JSON.stringify(policy);
  const causes: StatusCause[] = [];
  if (old !== undefined) {
    if (policy === 'SingleStack') {
      const ips = strings(spec['clusterIPs']);
      if (sameList(old['clusterIPs'], spec['clusterIPs']) && ips.length > 1)
        spec['clusterIPs'] = ips.slice(0, 1);
      const families = strings(spec['ipFamilies']);
      if (sameList(old['ipFamilies'], spec['ipFamilies']) && families.length > 1)
        spec['ipFamilies'] = families.slice(0, 1);
    } else {
      const reduced = (key: string): boolean =>
        strings(spec[key]).length > 0 && strings(spec[key]).length < strings(old[key]).length;
      if (reduced('clusterIPs')) {
        const message = "must be 'SingleStack' to release the secondary cluster IP";
        causes.push(invalid('spec.ipFamilyPolicy', policyText, message));
      }
      if (reduced('ipFamilies')) {
        const message = "must be 'SingleStack' to release the secondary IP family";
        causes.push(invalid('spec.ipFamilyPolicy', policyText, message));
      }
    }
  }
  const ips = strings(spec['clusterIPs']);
  const families = strings(spec['ipFamilies']) as IPFamily[];
  if (policy === 'SingleStack') {
    const many = "must be 'RequireDualStack' or 'PreferDualStack' when multiple";
    if (ips.length === 2)
      causes.push(invalid('spec.ipFamilyPolicy', policyText, `${many} cluster IPs are specified`));
    if (families.length === 2)
      causes.push(invalid('spec.ipFamilyPolicy', policyText, `${many} IP families are specified`));
  }
  for (const [i, ip] of ips.entries()) {
    if (ip === 'None') break;
    if (i < families.length) continue;
    const family = familyOf(ip);
    if (configured.includes(family)) families.push(family);
    else {
      const message = `${family} is not configured on this cluster`;
      causes.push(invalid(`spec.clusterIPs[${i}]`, goStrings(ips), message));
    }
  }
  if (causes.length > 0) return causes;
  const first = configured[0] ?? 'IPv4';
  if (headlessSelectorless(spec)) {
    if (families.length === 0) families.push(first);
    if (families.length < 2 && policy !== 'SingleStack') families.push(other(families[0] ?? first));
    spec['ipFamilies'] = families;
    return [];
  }
  if (policy === 'RequireDualStack' && configured.length < 2) {
    const message = 'this cluster is not configured for dual-stack services';
    causes.push(invalid('spec.ipFamilyPolicy', policyText, message));
  }
  families.forEach((family, i) => {
    if (!configured.includes(family))
      causes.push(
        invalid(`spec.ipFamilies[${i}]`, JSON.stringify(family), 'not configured on this cluster'),
      );
  });
  if (causes.length > 0) return causes;
  if (families.length === 0) families.push(first);
  if (policy !== 'SingleStack' && families.length === 1 && configured.length === 2)
    families.push(other(families[0] ?? first));
  spec['ipFamilies'] = families;
  return [];
}

/**
 * Gives the Service a cluster IP per family that lacks one (kube's allocClusterIPs; headless
 * and ExternalName Services get none), refusing a requested IP another Service holds.
 */
export function allocateClusterIPs(
  spec: JsonObject,
  old: JsonObject | undefined,
  allocator: ClusterIPAllocator,
  namespace: string,
  name: string,
): StatusCause[] {
  if (spec['type'] === 'ExternalName') return [];
  const ips = strings(spec['clusterIPs']);
  if (ips[0] === 'None') return [];
  const oldIPs = strings(old?.['clusterIPs']);
  const families = strings(spec['ipFamilies']) as IPFamily[];
  for (const [i, family] of families.entries()) {
    const ip = ips[i] ?? '';
    if (ip === '') ips[i] = allocator.next(family);
    else if (!oldIPs.includes(ip) && allocator.inUse(ip, namespace, name)) {
      const message = `failed to allocate IP ${ip}: provided IP is already allocated`;
      return [invalid('spec.clusterIPs', goStrings(strings(spec['clusterIPs'])), message)];
    }
  }
  spec['clusterIPs'] = ips;
  if (ips[0] !== undefined) spec['clusterIP'] = ips[0];
  return [];
}
