// The default RBAC objects kube-apiserver creates in a fresh cluster (bootstrappolicy), limited
// to what olmq and kubectl users meet: the user-facing roles, discovery and the auth-delegation
// roles, with their default bindings.
import type { JsonObject } from '../../shared/kube/json.js';
import { aggregatedRules } from './aggregation.js';

const rbacGroup = 'rbac.authorization.k8s.io';
const rbacApiVersion = `${rbacGroup}/v1`;
const read = ['get', 'list', 'watch'];
const write = ['create', 'update', 'patch', 'delete', 'deletecollection'];
const readWrite = [...read, ...write];

const sorted = (values: readonly string[]): string[] => [...values].sort();

/** A resource rule as kube's rule builder stores it: every list sorted. */
function resourceRule(
  verbs: readonly string[],
  apiGroups: readonly string[],
  resources: readonly string[],
  resourceNames: readonly string[] = [],
): JsonObject {
  const rule: JsonObject = {
    verbs: sorted(verbs),
    apiGroups: sorted(apiGroups),
    resources: sorted(resources),
  };
  if (resourceNames.length > 0) rule['resourceNames'] = sorted(resourceNames);
  return rule;
}

function nonResourceRule(verbs: readonly string[], urls: readonly string[]): JsonObject {
  return { verbs: sorted(verbs), nonResourceURLs: sorted(urls) };
}

function bootstrapMetadata(
  name: string,
  extraLabels: Record<string, string> = {},
  namespace?: string,
): JsonObject {
  return {
    name,
    ...(namespace !== undefined ? { namespace } : {}),
    labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults', ...extraLabels },
    annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
  };
}

function clusterRole(
  name: string,
  rules: JsonObject[],
  labels: Record<string, string> = {},
): JsonObject {
  return {
    apiVersion: rbacApiVersion,
    kind: 'ClusterRole',
    metadata: bootstrapMetadata(name, labels),
    rules,
  };
}

function aggregatingClusterRole(
  name: string,
  selectorLabel: string,
  labels: Record<string, string> = {},
): JsonObject {
  return {
    apiVersion: rbacApiVersion,
    kind: 'ClusterRole',
    metadata: bootstrapMetadata(name, labels),
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [selectorLabel]: 'true' } }] },
    rules: [],
  };
}

type SubjectKind = 'User' | 'Group';

function subject(kind: SubjectKind, name: string): JsonObject {
  return { kind, apiGroup: rbacGroup, name };
}

function clusterRoleBinding(name: string, role: string, subjects: JsonObject[]): JsonObject {
  return {
    apiVersion: rbacApiVersion,
    kind: 'ClusterRoleBinding',
    metadata: bootstrapMetadata(name),
    roleRef: { apiGroup: rbacGroup, kind: 'ClusterRole', name: role },
    subjects,
  };
}

const aggregateToAdmin = 'rbac.authorization.k8s.io/aggregate-to-admin';
const aggregateToEdit = 'rbac.authorization.k8s.io/aggregate-to-edit';
const aggregateToView = 'rbac.authorization.k8s.io/aggregate-to-view';

function clusterRoles(): JsonObject[] {
  return [
    clusterRole('cluster-admin', [
      resourceRule(['*'], ['*'], ['*']),
      nonResourceRule(['*'], ['*']),
    ]),
    aggregatingClusterRole('admin', aggregateToAdmin),
    aggregatingClusterRole('edit', aggregateToEdit, { [aggregateToAdmin]: 'true' }),
    aggregatingClusterRole('view', aggregateToView, { [aggregateToEdit]: 'true' }),
    clusterRole(
      'system:aggregate-to-admin',
      [
        resourceRule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']),
        resourceRule(readWrite, [rbacGroup], ['roles', 'rolebindings']),
      ],
      { [aggregateToAdmin]: 'true' },
    ),
    clusterRole(
      'system:aggregate-to-edit',
      [
        resourceRule(
          read,
          [''],
          [
            'pods/attach',
            'pods/proxy',
            'pods/exec',
            'pods/portforward',
            'secrets',
            'services/proxy',
          ],
        ),
        resourceRule(['impersonate'], [''], ['serviceaccounts']),
        resourceRule(
          write,
          [''],
          ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward'],
        ),
        resourceRule(['create'], [''], ['pods/eviction']),
        resourceRule(
          write,
          [''],
          [
            'replicationcontrollers',
            'replicationcontrollers/scale',
            'serviceaccounts',
            'services',
            'services/proxy',
            'persistentvolumeclaims',
            'configmaps',
            'secrets',
            'events',
          ],
        ),
        resourceRule(['create'], [''], ['serviceaccounts/token']),
        resourceRule(
          write,
          ['apps'],
          [
            'statefulsets',
            'statefulsets/scale',
            'daemonsets',
            'deployments',
            'deployments/scale',
            'deployments/rollback',
            'replicasets',
            'replicasets/scale',
          ],
        ),
        resourceRule(write, ['autoscaling'], ['horizontalpodautoscalers']),
        resourceRule(write, ['batch'], ['jobs', 'cronjobs']),
        resourceRule(
          write,
          ['extensions'],
          [
            'daemonsets',
            'deployments',
            'deployments/scale',
            'deployments/rollback',
            'ingresses',
            'replicasets',
            'replicasets/scale',
            'replicationcontrollers/scale',
            'networkpolicies',
          ],
        ),
        resourceRule(write, ['policy'], ['poddisruptionbudgets']),
        resourceRule(write, ['networking.k8s.io'], ['networkpolicies', 'ingresses']),
        resourceRule(readWrite, ['coordination.k8s.io'], ['leases']),
      ],
      { [aggregateToEdit]: 'true' },
    ),
    clusterRole(
      'system:aggregate-to-view',
      [
        resourceRule(
          read,
          [''],
          [
            'pods',
            'replicationcontrollers',
            'replicationcontrollers/scale',
            'serviceaccounts',
            'services',
            'services/status',
            'endpoints',
            'persistentvolumeclaims',
            'persistentvolumeclaims/status',
            'configmaps',
          ],
        ),
        resourceRule(
          read,
          [''],
          [
            'limitranges',
            'resourcequotas',
            'bindings',
            'events',
            'pods/status',
            'resourcequotas/status',
            'namespaces/status',
            'replicationcontrollers/status',
            'pods/log',
          ],
        ),
        // Namespaces can be listed but not changed by a namespace viewer.
        resourceRule(read, [''], ['namespaces']),
        resourceRule(read, ['discovery.k8s.io'], ['endpointslices']),
        resourceRule(
          read,
          ['apps'],
          [
            'controllerrevisions',
            'statefulsets',
            'statefulsets/status',
            'statefulsets/scale',
            'daemonsets',
            'daemonsets/status',
            'deployments',
            'deployments/status',
            'deployments/scale',
            'replicasets',
            'replicasets/status',
            'replicasets/scale',
          ],
        ),
        resourceRule(
          read,
          ['autoscaling'],
          ['horizontalpodautoscalers', 'horizontalpodautoscalers/status'],
        ),
        resourceRule(read, ['batch'], ['jobs', 'cronjobs', 'cronjobs/status', 'jobs/status']),
        resourceRule(
          read,
          ['extensions'],
          [
            'daemonsets',
            'daemonsets/status',
            'deployments',
            'deployments/scale',
            'deployments/status',
            'ingresses',
            'ingresses/status',
            'replicasets',
            'replicasets/scale',
            'replicasets/status',
            'replicationcontrollers/scale',
            'networkpolicies',
          ],
        ),
        resourceRule(read, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
        resourceRule(
          read,
          ['networking.k8s.io'],
          ['ingresses', 'ingresses/status', 'networkpolicies'],
        ),
      ],
      { [aggregateToView]: 'true' },
    ),
    clusterRole('system:discovery', [
      nonResourceRule(
        ['get'],
        [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
      ),
    ]),
    clusterRole('system:basic-user', [
      resourceRule(
        ['create'],
        ['authorization.k8s.io'],
        ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
      ),
      resourceRule(['create'], ['authentication.k8s.io'], ['selfsubjectreviews']),
    ]),
    clusterRole('system:public-info-viewer', [
      nonResourceRule(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/']),
    ]),
    clusterRole('system:auth-delegator', [
      resourceRule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      resourceRule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
    ]),
    clusterRole('system:monitoring', [
      nonResourceRule(
        ['get'],
        [
          '/healthz',
          '/healthz/*',
          '/livez',
          '/livez/*',
          '/metrics',
          '/metrics/slis',
          '/readyz',
          '/readyz/*',
        ],
      ),
    ]),
    clusterRole('system:service-account-issuer-discovery', [
      nonResourceRule(['get'], ['/.well-known/openid-configuration', '/openid/v1/jwks']),
    ]),
  ];
}

function clusterRoleBindings(): JsonObject[] {
  const authenticated = subject('Group', 'system:authenticated');
  return [
    clusterRoleBinding('cluster-admin', 'cluster-admin', [subject('Group', 'system:masters')]),
    clusterRoleBinding('system:discovery', 'system:discovery', [authenticated]),
    clusterRoleBinding('system:basic-user', 'system:basic-user', [authenticated]),
    clusterRoleBinding('system:public-info-viewer', 'system:public-info-viewer', [
      authenticated,
      subject('Group', 'system:unauthenticated'),
    ]),
    clusterRoleBinding('system:monitoring', 'system:monitoring', [
      subject('Group', 'system:monitoring'),
    ]),
    clusterRoleBinding(
      'system:service-account-issuer-discovery',
      'system:service-account-issuer-discovery',
      [subject('Group', 'system:serviceaccounts')],
    ),
  ];
}

function kubeSystemRbac(): JsonObject[] {
  const role = 'extension-apiserver-authentication-reader';
  return [
    {
      apiVersion: rbacApiVersion,
      kind: 'Role',
      metadata: bootstrapMetadata(role, {}, 'kube-system'),
      rules: [resourceRule(read, [''], ['configmaps'], ['extension-apiserver-authentication'])],
    },
    {
      apiVersion: rbacApiVersion,
      kind: 'RoleBinding',
      metadata: bootstrapMetadata(`system::${role}`, {}, 'kube-system'),
      roleRef: { apiGroup: rbacGroup, kind: 'Role', name: role },
      subjects: [
        subject('User', 'system:kube-controller-manager'),
        subject('User', 'system:kube-scheduler'),
      ],
    },
  ];
}

/**
 * Default RBAC objects of a fresh cluster (cluster-admin, admin/edit/view, system:* roles and
 * bindings), with admin/edit/view already holding their aggregated rules as a running cluster shows.
 */
export function bootstrapRbac(): JsonObject[] {
  const roles = clusterRoles();
  const aggregated = aggregatedRules(roles);
  const filled = roles.map((role) => {
    const metadata = role['metadata'];
    const name =
      typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata)
        ? metadata['name']
        : undefined;
    const rules = typeof name === 'string' ? aggregated.get(name) : undefined;
    return rules === undefined ? role : { ...role, rules };
  });
  return [...filled, ...clusterRoleBindings(), ...kubeSystemRbac()];
}
