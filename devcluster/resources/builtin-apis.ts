// More kinds of a default kube-apiserver 1.30: autoscaling, certificates, endpoint slices,
// runtime and priority classes, flow control and admission policies, with kube's printer columns.
import type { JsonObject } from '../../shared/kube/json.js';
import { humanDuration } from '../../shared/kube/time.js';
import { ageColumn, conditionTrue, count, field, num, str, type BuiltinSpec } from './columns.js';

/** TARGETS of an HPA: each metric's current/target, as printHorizontalPodAutoscaler. */
function hpaTargets(hpa: JsonObject): string {
  const metrics = field(hpa, 'spec', 'metrics');
  if (!Array.isArray(metrics) || metrics.length === 0) return '<none>';
  return metrics
    .map((m) => {
      const metric = m as JsonObject;
      const type = str(metric, 'type');
      const source = field(metric, type.charAt(0).toLowerCase() + type.slice(1)) as JsonObject;
      const target = (field(source ?? {}, 'target') ?? {}) as JsonObject;
      const wanted =
        typeof target['averageUtilization'] === 'number'
          ? `${target['averageUtilization']}%`
          : str(target, 'averageValue') || str(target, 'value') || '<unset>';
      return `<unknown>/${wanted}`;
    })
    .join(', ');
}

/** CONDITION of a CSR: Approved/Denied, then Failed and Issued. */
function csrCondition(csr: JsonObject): string {
  const parts: string[] = [];
  if (conditionTrue(csr, 'Approved')) parts.push('Approved');
  if (conditionTrue(csr, 'Denied')) parts.push('Denied');
  if (conditionTrue(csr, 'Failed')) parts.push('Failed');
  if (str(csr, 'status', 'certificate') !== '') parts.push('Issued');
  return parts.length === 0 ? 'Pending' : parts.join(',');
}

function endpointSlicePorts(slice: JsonObject): string {
  const ports = field(slice, 'ports');
  if (!Array.isArray(ports) || ports.length === 0) return '<unset>';
  return ports.map((p) => String(num(p as JsonObject, 'port'))).join(',');
}

function endpointSliceEndpoints(slice: JsonObject): string {
  const endpoints = field(slice, 'endpoints');
  if (!Array.isArray(endpoints) || endpoints.length === 0) return '<unset>';
  const addresses = endpoints.flatMap((e) => {
    const list = field(e as JsonObject, 'addresses');
    return Array.isArray(list) ? list.map(String) : [];
  });
  const shown = addresses.slice(0, 3).join(',');
  return addresses.length > 3 ? `${shown} + ${addresses.length - 3} more...` : shown;
}

/** The kinds above. */
export const clusterApiSpecs: readonly BuiltinSpec[] = [
  {
    group: 'autoscaling',
    version: 'v2',
    resource: 'horizontalpodautoscalers',
    kind: 'HorizontalPodAutoscaler',
    singular: 'horizontalpodautoscaler',
    namespaced: true,
    shortNames: ['hpa'],
    categories: ['all'],
    status: true,
    columns: [
      {
        name: 'Reference',
        type: 'string',
        cell: (o) =>
          `${str(o, 'spec', 'scaleTargetRef', 'kind')}/${str(o, 'spec', 'scaleTargetRef', 'name')}`,
      },
      { name: 'Targets', type: 'string', cell: hpaTargets },
      {
        name: 'MinPods',
        type: 'string',
        cell: (o) => {
          const min = field(o, 'spec', 'minReplicas');
          return typeof min === 'number' ? String(min) : '<unset>';
        },
      },
      { name: 'MaxPods', type: 'string', cell: (o) => String(num(o, 'spec', 'maxReplicas')) },
      {
        name: 'Replicas',
        type: 'string',
        cell: (o) => String(num(o, 'status', 'currentReplicas')),
      },
      ageColumn,
    ],
  },
  {
    group: 'certificates.k8s.io',
    version: 'v1',
    resource: 'certificatesigningrequests',
    kind: 'CertificateSigningRequest',
    singular: 'certificatesigningrequest',
    namespaced: false,
    shortNames: ['csr'],
    status: true,
    extra: ['approval'],
    columns: [
      ageColumn,
      { name: 'SignerName', type: 'string', cell: (o) => str(o, 'spec', 'signerName') },
      { name: 'Requestor', type: 'string', cell: (o) => str(o, 'spec', 'username') },
      {
        name: 'RequestedDuration',
        type: 'string',
        cell: (o) => {
          const seconds = field(o, 'spec', 'expirationSeconds');
          return typeof seconds === 'number' ? humanDuration(seconds) : '<none>';
        },
      },
      { name: 'Condition', type: 'string', cell: csrCondition },
    ],
  },
  {
    group: 'discovery.k8s.io',
    version: 'v1',
    resource: 'endpointslices',
    kind: 'EndpointSlice',
    singular: 'endpointslice',
    namespaced: true,
    columns: [
      { name: 'AddressType', type: 'string', cell: (o) => str(o, 'addressType') },
      { name: 'Ports', type: 'string', cell: endpointSlicePorts },
      { name: 'Endpoints', type: 'string', cell: endpointSliceEndpoints },
      ageColumn,
    ],
  },
  {
    group: 'node.k8s.io',
    version: 'v1',
    resource: 'runtimeclasses',
    kind: 'RuntimeClass',
    singular: 'runtimeclass',
    namespaced: false,
    columns: [{ name: 'Handler', type: 'string', cell: (o) => str(o, 'handler') }, ageColumn],
  },
  {
    group: 'scheduling.k8s.io',
    version: 'v1',
    resource: 'priorityclasses',
    kind: 'PriorityClass',
    singular: 'priorityclass',
    namespaced: false,
    shortNames: ['pc'],
    columns: [
      { name: 'Value', type: 'integer', cell: (o) => num(o, 'value') },
      {
        name: 'Global-Default',
        type: 'boolean',
        cell: (o) => String(field(o, 'globalDefault') === true),
      },
      ageColumn,
    ],
  },
  {
    group: 'flowcontrol.apiserver.k8s.io',
    version: 'v1',
    resource: 'flowschemas',
    kind: 'FlowSchema',
    singular: 'flowschema',
    namespaced: false,
    status: true,
    columns: [
      {
        name: 'PriorityLevel',
        type: 'string',
        cell: (o) => str(o, 'spec', 'priorityLevelConfiguration', 'name'),
      },
      {
        name: 'MatchingPrecedence',
        type: 'string',
        cell: (o) => String(num(o, 'spec', 'matchingPrecedence')),
      },
      {
        name: 'DistinguisherMethod',
        type: 'string',
        cell: (o) => str(o, 'spec', 'distinguisherMethod', 'type') || '<none>',
      },
      ageColumn,
    ],
  },
  {
    group: 'flowcontrol.apiserver.k8s.io',
    version: 'v1',
    resource: 'prioritylevelconfigurations',
    kind: 'PriorityLevelConfiguration',
    singular: 'prioritylevelconfiguration',
    namespaced: false,
    status: true,
    columns: [{ name: 'Type', type: 'string', cell: (o) => str(o, 'spec', 'type') }, ageColumn],
  },
  {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    resource: 'validatingadmissionpolicies',
    kind: 'ValidatingAdmissionPolicy',
    singular: 'validatingadmissionpolicy',
    namespaced: false,
    categories: ['api-extensions'],
    status: true,
    generation: true,
    columns: [
      { name: 'Validations', type: 'integer', cell: (o) => count(o, 'spec', 'validations') },
      {
        name: 'ParamKind',
        type: 'string',
        cell: (o) => {
          const kind = str(o, 'spec', 'paramKind', 'kind');
          return kind === '' ? '<unset>' : `${str(o, 'spec', 'paramKind', 'apiVersion')}/${kind}`;
        },
      },
      ageColumn,
    ],
  },
  {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    resource: 'validatingadmissionpolicybindings',
    kind: 'ValidatingAdmissionPolicyBinding',
    singular: 'validatingadmissionpolicybinding',
    namespaced: false,
    categories: ['api-extensions'],
    generation: true,
    columns: [
      { name: 'PolicyName', type: 'string', cell: (o) => str(o, 'spec', 'policyName') },
      {
        name: 'ParamRef',
        type: 'string',
        cell: (o) => {
          const name = str(o, 'spec', 'paramRef', 'name');
          return name === '' ? '<unset>' : `${str(o, 'spec', 'paramRef', 'namespace')}/${name}`;
        },
      },
      ageColumn,
    ],
  },
];
