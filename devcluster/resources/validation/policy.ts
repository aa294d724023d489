// PodDisruptionBudgets (policy/v1) and NetworkPolicies (networking.k8s.io/v1), as kube 1.30's
// ValidatePodDisruptionBudget and ValidateNetworkPolicy check them.
import { isIP } from 'node:net';
import { isJsonObject, type JsonObject, type JsonValue } from '../../../shared/kube/json.js';
import type { StatusCause } from '../../../shared/kube/status.js';
import {
  forbidden,
  goQuote,
  invalid,
  invalidEach,
  notSupported,
  required,
  type GoSyntax,
} from './field.js';
import { percentErrors, portNameErrors, portNumberErrors } from './identifiers.js';
import { validateLabelSelector } from './meta.js';

/** Go's %#v of an intstr.IntOrString. */
function goIntOrString(value: number | string): GoSyntax {
  return typeof value === 'number'
    ? { goSyntax: `intstr.IntOrString{Type:0, IntVal:${value}, StrVal:""}` }
    : { goSyntax: `intstr.IntOrString{Type:1, IntVal:0, StrVal:${goQuote(value)}}` };
}

/** ValidatePositiveIntOrPercent and IsNotMoreThan100Percent. */
function intOrPercentCauses(value: JsonValue | undefined, path: string): StatusCause[] {
  if (typeof value === 'number')
    return value < 0 ? [invalid(path, value, 'must be greater than or equal to 0')] : [];
  if (typeof value !== 'string') return [];
  const causes = invalidEach(path, goIntOrString(value), percentErrors(value));
  if (causes.length === 0 && Number(value.slice(0, -1)) > 100)
    causes.push(invalid(path, goIntOrString(value), 'must not be greater than 100%'));
  return causes;
}

/** ValidatePodDisruptionBudgetSpec. */
export function validatePodDisruptionBudget(object: JsonObject): StatusCause[] {
  const spec = isJsonObject(object['spec']) ? object['spec'] : {};
  const causes: StatusCause[] = [];
  const min = spec['minAvailable'];
  const max = spec['maxUnavailable'];
  if (min !== undefined && min !== null && max !== undefined && max !== null) {
    // kube prints the whole spec struct (with pointer addresses); its shape is kept, not the addresses.
    causes.push(
      invalid(
        'spec',
        { goSyntax: 'policy.PodDisruptionBudgetSpec{...}' },
        'minAvailable and maxUnavailable cannot be both set',
      ),
    );
  }
  causes.push(...intOrPercentCauses(min, 'spec.minAvailable'));
  causes.push(...intOrPercentCauses(max, 'spec.maxUnavailable'));
  causes.push(...validateLabelSelector(spec['selector'], 'spec.selector'));
  const policy = spec['unhealthyPodEvictionPolicy'];
  if (typeof policy === 'string' && policy !== 'IfHealthyBudget' && policy !== 'AlwaysAllow') {
    causes.push(
      notSupported('spec.unhealthyPodEvictionPolicy', policy, ['AlwaysAllow', 'IfHealthyBudget']),
    );
  }
  return causes;
}

/** ValidateNetworkPolicyPort. */
function policyPortCauses(port: JsonObject, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const protocol = port['protocol'];
  if (typeof protocol === 'string' && !['TCP', 'UDP', 'SCTP'].includes(protocol))
    causes.push(notSupported(`${path}.protocol`, protocol, ['TCP', 'UDP', 'SCTP']));
  const number = port['port'];
  const end = port['endPort'];
  if (typeof number === 'number') {
    causes.push(...invalidEach(`${path}.port`, number, portNumberErrors(number)));
    if (typeof end === 'number') {
      if (end < number)
        causes.push(invalid(`${path}.endPort`, number, 'must be greater than or equal to `port`'));
      causes.push(...invalidEach(`${path}.endPort`, end, portNumberErrors(end)));
    }
  } else if (typeof number === 'string') {
    if (typeof end === 'number')
      causes.push(
        invalid(`${path}.endPort`, end, 'may not be specified when `port` is non-numeric'),
      );
    causes.push(...invalidEach(`${path}.port`, number, portNameErrors(number)));
  } else if (typeof end === 'number') {
    causes.push(
      invalid(`${path}.endPort`, end, 'may not be specified when `port` is not specified'),
    );
  }
  return causes;
}

function cidrValid(cidr: string): boolean {
  const [ip, bits, extra] = cidr.split('/');
  if (ip === undefined || bits === undefined || extra !== undefined || !/^\d+$/.test(bits))
    return false;
  const family = isIP(ip);
  return family !== 0 && Number(bits) <= (family === 4 ? 32 : 128);
}

/** ValidateNetworkPolicyPeer: at least one peer; an ipBlock alone. */
function peerCauses(peer: JsonObject, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  let peers = 0;
  for (const key of ['podSelector', 'namespaceSelector']) {
    if (!isJsonObject(peer[key])) continue;
    peers++;
    causes.push(...validateLabelSelector(peer[key], `${path}.${key}`));
  }
  const block = peer['ipBlock'];
  if (isJsonObject(block)) {
    peers++;
    const cidr = typeof block['cidr'] === 'string' ? block['cidr'] : '';
    if (cidr === '') causes.push(required(`${path}.ipBlock.cidr`));
    else if (!cidrValid(cidr))
      causes.push(
        invalid(
          `${path}.ipBlock.cidr`,
          cidr,
          'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
        ),
      );
  }
  if (peers === 0) causes.push(required(path, 'must specify a peer'));
  else if (peers > 1 && isJsonObject(block))
    causes.push(forbidden(path, 'may not specify both ipBlock and another peer'));
  return causes;
}

function rulesCauses(rules: JsonValue | undefined, path: string, peersKey: string): StatusCause[] {
  const causes: StatusCause[] = [];
  (Array.isArray(rules) ? rules : []).forEach((value, i) => {
    const rule = isJsonObject(value) ? value : {};
    const at = `${path}[${i}]`;
    const ports = rule['ports'];
    (Array.isArray(ports) ? ports : []).forEach((port, j) => {
      causes.push(...policyPortCauses(isJsonObject(port) ? port : {}, `${at}.ports[${j}]`));
    });
    const peers = rule[peersKey];
    (Array.isArray(peers) ? peers : []).forEach((peer, j) => {
      causes.push(...peerCauses(isJsonObject(peer) ? peer : {}, `${at}.${peersKey}[${j}]`));
    });
  });
  return causes;
}

/** ValidateNetworkPolicySpec. */
export function validateNetworkPolicy(object: JsonObject): StatusCause[] {
  const spec = isJsonObject(object['spec']) ? object['spec'] : {};
  const causes = validateLabelSelector(spec['podSelector'], 'spec.podSelector');
  causes.push(...rulesCauses(spec['ingress'], 'spec.ingress', 'from'));
  causes.push(...rulesCauses(spec['egress'], 'spec.egress', 'to'));
  const types = Array.isArray(spec['policyTypes']) ? spec['policyTypes'] : [];
  if (types.length > 2) {
    causes.push(
      invalid(
        'spec.policyTypes',
        { goSyntax: '&[]networking.PolicyType{...}' },
        'may not specify more than two policyTypes',
      ),
    );
    return causes;
  }
  types.forEach((type, i) => {
    if (type !== 'Ingress' && type !== 'Egress')
      causes.push(
        notSupported(`spec.policyTypes[${i}]`, typeof type === 'string' ? type : '', [
          'Ingress',
          'Egress',
        ]),
      );
  });
  return causes;
}
