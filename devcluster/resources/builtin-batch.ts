// The batch/v1, policy/v1 and networking.k8s.io/v1 kinds, declared as kube-apiserver 1.30
// serves them, with the columns of kube's printers (pkg/printers/internalversion/printers.go).
import type { JsonObject } from '../../shared/kube/json.js';
import {
  ageColumn,
  conditionTrue,
  containerField,
  field,
  formatAge,
  num,
  selectorText,
  str,
  type BuiltinSpec,
} from './columns.js';
import type { PrinterColumn } from './types.js';

/** The STATUS cell of a Job, as printJob derives it from the conditions. */
export function jobStatusText(job: JsonObject): string {
  if (conditionTrue(job, 'Complete')) return 'Complete';
  if (conditionTrue(job, 'Failed')) return 'Failed';
  if (conditionTrue(job, 'Suspended')) return 'Suspended';
  if (conditionTrue(job, 'FailureTarget')) return 'FailureTarget';
  return 'Running';
}

function jobCompletions(job: JsonObject): string {
  const succeeded = num(job, 'status', 'succeeded');
  const completions = field(job, 'spec', 'completions');
  if (typeof completions === 'number') return `${succeeded}/${completions}`;
  const parallelism = num(job, 'spec', 'parallelism');
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

function jobDuration(job: JsonObject, now: number): string {
  const start = str(job, 'status', 'startTime');
  if (start === '') return '';
  const end = str(job, 'status', 'completionTime');
  return formatAge(start, end === '' ? now : Date.parse(end));
}

function intOrPercent(object: JsonObject, ...path: string[]): string {
  const value = field(object, ...path);
  return typeof value === 'number' || typeof value === 'string' ? String(value) : 'N/A';
}

function ingressHosts(ingress: JsonObject): string {
  const rules = field(ingress, 'spec', 'rules');
  const list = Array.isArray(rules) ? rules : [];
  const hosts = list
    .slice(0, 3)
    .map((r) => str(r as JsonObject, 'host'))
    .filter((h) => h !== '');
  if (hosts.length === 0) return '*';
  return list.length > 3 ? `${hosts.join(',')} + ${list.length - 3} more...` : hosts.join(',');
}

function ingressAddress(ingress: JsonObject): string {
  const entries = field(ingress, 'status', 'loadBalancer', 'ingress');
  if (!Array.isArray(entries)) return '';
  const seen = new Set(
    entries.map((e) => str(e as JsonObject, 'ip') || str(e as JsonObject, 'hostname')),
  );
  seen.delete('');
  const text = [...seen].sort().join(',');
  return text.length > 16 ? `${text.slice(0, 13)}...` : text;
}

function ingressClassParameters(o: JsonObject): string {
  const kind = str(o, 'spec', 'parameters', 'kind');
  if (kind === '') return '<none>';
  const group = str(o, 'spec', 'parameters', 'apiGroup');
  return `${kind}${group === '' ? '' : `.${group}`}/${str(o, 'spec', 'parameters', 'name')}`;
}

const wideTemplateColumns = (...spec: string[]): PrinterColumn[] => [
  {
    name: 'Containers',
    type: 'string',
    priority: 1,
    description: 'Names of each container in the template.',
    cell: (o) => containerField(o, 'name', ...spec, 'template', 'spec'),
  },
  {
    name: 'Images',
    type: 'string',
    priority: 1,
    description: 'Images referenced by each container in the template.',
    cell: (o) => containerField(o, 'image', ...spec, 'template', 'spec'),
  },
  {
    name: 'Selector',
    type: 'string',
    priority: 1,
    cell: (o) => selectorText(field(o, ...spec, 'selector')) || '<none>',
  },
];

/** The kinds of batch/v1, policy/v1 and networking.k8s.io/v1. */
export const batchAndNetworkingSpecs: readonly BuiltinSpec[] = [
  {
    group: 'batch',
    version: 'v1',
    resource: 'jobs',
    kind: 'Job',
    singular: 'job',
    namespaced: true,
    categories: ['all'],
    status: true,
    generation: true,
    columns: [
      { name: 'Status', type: 'string', description: 'Status of the job.', cell: jobStatusText },
      { name: 'Completions', type: 'string', cell: jobCompletions },
      {
        name: 'Duration',
        type: 'string',
        description: 'Time required to complete the job.',
        cell: jobDuration,
      },
      ageColumn,
      ...wideTemplateColumns('spec'),
    ],
  },
  {
    group: 'batch',
    version: 'v1',
    resource: 'cronjobs',
    kind: 'CronJob',
    singular: 'cronjob',
    namespaced: true,
    shortNames: ['cj'],
    categories: ['all'],
    status: true,
    generation: true,
    columns: [
      { name: 'Schedule', type: 'string', cell: (o) => str(o, 'spec', 'schedule') },
      { name: 'Timezone', type: 'string', cell: (o) => str(o, 'spec', 'timeZone') || '<none>' },
      {
        name: 'Suspend',
        type: 'boolean',
        cell: (o) => {
          const suspend = field(o, 'spec', 'suspend');
          return typeof suspend === 'boolean' ? (suspend ? 'True' : 'False') : '<unset>';
        },
      },
      {
        name: 'Active',
        type: 'integer',
        cell: (o) => {
          const active = field(o, 'status', 'active');
          return Array.isArray(active) ? active.length : 0;
        },
      },
      {
        name: 'Last Schedule',
        type: 'string',
        cell: (o, now) => {
          const last = str(o, 'status', 'lastScheduleTime');
          return last === '' ? '<none>' : formatAge(last, now);
        },
      },
      ageColumn,
      ...wideTemplateColumns('spec', 'jobTemplate', 'spec'),
    ],
  },
  {
    group: 'policy',
    version: 'v1',
    resource: 'poddisruptionbudgets',
    kind: 'PodDisruptionBudget',
    singular: 'poddisruptionbudget',
    namespaced: true,
    shortNames: ['pdb'],
    status: true,
    generation: true,
    columns: [
      {
        name: 'Min Available',
        type: 'string',
        cell: (o) => intOrPercent(o, 'spec', 'minAvailable'),
      },
      {
        name: 'Max Unavailable',
        type: 'string',
        cell: (o) => intOrPercent(o, 'spec', 'maxUnavailable'),
      },
      {
        name: 'Allowed Disruptions',
        type: 'integer',
        cell: (o) => num(o, 'status', 'disruptionsAllowed'),
      },
      ageColumn,
    ],
  },
  {
    group: 'networking.k8s.io',
    version: 'v1',
    resource: 'networkpolicies',
    kind: 'NetworkPolicy',
    singular: 'networkpolicy',
    namespaced: true,
    shortNames: ['netpol'],
    generation: true,
    columns: [
      {
        name: 'Pod-Selector',
        type: 'string',
        cell: (o) => selectorText(field(o, 'spec', 'podSelector')) || '<none>',
      },
      ageColumn,
    ],
  },
  {
    group: 'networking.k8s.io',
    version: 'v1',
    resource: 'ingresses',
    kind: 'Ingress',
    singular: 'ingress',
    namespaced: true,
    shortNames: ['ing'],
    status: true,
    generation: true,
    columns: [
      {
        name: 'Class',
        type: 'string',
        cell: (o) => str(o, 'spec', 'ingressClassName') || '<none>',
      },
      { name: 'Hosts', type: 'string', cell: ingressHosts },
      { name: 'Address', type: 'string', cell: ingressAddress },
      {
        name: 'Ports',
        type: 'string',
        cell: (o) => (Array.isArray(field(o, 'spec', 'tls')) ? '80, 443' : '80'),
      },
      ageColumn,
    ],
  },
  {
    group: 'networking.k8s.io',
    version: 'v1',
    resource: 'ingressclasses',
    kind: 'IngressClass',
    singular: 'ingressclass',
    namespaced: false,
    generation: true,
    columns: [
      { name: 'Controller', type: 'string', cell: (o) => str(o, 'spec', 'controller') },
      { name: 'Parameters', type: 'string', cell: ingressClassParameters },
      ageColumn,
    ],
  },
];
