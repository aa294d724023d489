// Rule matching, one PolicyRule at a time, through the public authorizer.
import t from 'tap';
import type { JsonObject } from '../../shared/kube/json.js';
import type { RequestAttributes } from '../../devcluster/auth/index.js';
import { authorize } from '../../devcluster/auth/index.js';
import {
  alice,
  clusterRole,
  clusterRoleBinding,
  pathRequest,
  rbacOf,
  resourceRequest,
} from './devcluster-auth-fixtures.js';

function allowedBy(rule: JsonObject, attributes: RequestAttributes): boolean {
  const rbac = rbacOf([
    clusterRole('r', [rule]),
    clusterRoleBinding('b', 'r', [{ kind: 'User', name: 'alice' }]),
  ]);
  return authorize(attributes, rbac).allowed;
}

const getPods = resourceRequest(alice, 'get', { resource: 'pods', namespace: 'ns', name: 'p1' });
const podLog = resourceRequest(alice, 'get', {
  resource: 'pods',
  subresource: 'log',
  namespace: 'ns',
  name: 'p1',
});
const scaleDeployment = resourceRequest(alice, 'update', {
  apiGroup: 'apps',
  resource: 'deployments',
  subresource: 'scale',
  namespace: 'ns',
  name: 'd',
});

const table: { name: string; rule: JsonObject; attributes: RequestAttributes; allowed: boolean }[] =
  [
    {
      name: 'exact verb, group and resource',
      rule: { verbs: ['get'], apiGroups: [''], resources: ['pods'] },
      attributes: getPods,
      allowed: true,
    },
    {
      name: 'other verb',
      rule: { verbs: ['list'], apiGroups: [''], resources: ['pods'] },
      attributes: getPods,
      allowed: false,
    },
    {
      name: 'verb wildcard',
      rule: { verbs: ['*'], apiGroups: [''], resources: ['pods'] },
      attributes: getPods,
      allowed: true,
    },
    {
      name: 'other group',
      rule: { verbs: ['get'], apiGroups: ['apps'], resources: ['pods'] },
      attributes: getPods,
      allowed: false,
    },
    {
      name: 'no apiGroups grants nothing',
      rule: { verbs: ['get'], resources: ['pods'] },
      attributes: getPods,
      allowed: false,
    },
    {
      name: 'group wildcard',
      rule: { verbs: ['get'], apiGroups: ['*'], resources: ['pods'] },
      attributes: getPods,
      allowed: true,
    },
    {
      name: 'other resource',
      rule: { verbs: ['get'], apiGroups: [''], resources: ['services'] },
      attributes: getPods,
      allowed: false,
    },
    {
      name: 'resource wildcard',
      rule: { verbs: ['get'], apiGroups: [''], resources: ['*'] },
      attributes: getPods,
      allowed: true,
    },
    {
      name: 'resource names include the name',
      rule: { verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['p0', 'p1'] },
      attributes: getPods,
      allowed: true,
    },
    {
      name: 'resource names exclude the name',
      rule: { verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['p0'] },
      attributes: getPods,
      allowed: false,
    },
    {
      name: 'resource names never match an unnamed list',
      rule: { verbs: ['list'], apiGroups: [''], resources: ['pods'], resourceNames: ['p1'] },
      attributes: resourceRequest(alice, 'list', { resource: 'pods', namespace: 'ns' }),
      allowed: false,
    },
    {
      name: 'resource does not grant its subresource',
      rule: { verbs: ['get'], apiGroups: [''], resources: ['pods'] },
      attributes: podLog,
      allowed: false,
    },
    {
      name: 'resource/subresource grants it',
      rule: { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] },
      attributes: podLog,
      allowed: true,
    },
    {
      name: 'subresource does not grant the resource',
      rule: { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] },
      attributes: getPods,
      allowed: false,
    },
    {
      name: 'resource wildcard grants subresources',
      rule: { verbs: ['get'], apiGroups: [''], resources: ['*'] },
      attributes: podLog,
      allowed: true,
    },
    {
      name: '*/subresource grants it on any resource',
      rule: { verbs: ['update'], apiGroups: ['apps'], resources: ['*/scale'] },
      attributes: scaleDeployment,
      allowed: true,
    },
    {
      name: '*/subresource needs the same subresource',
      rule: { verbs: ['get'], apiGroups: [''], resources: ['*/status'] },
      attributes: podLog,
      allowed: false,
    },
    {
      name: '*/subresource does not grant the resource',
      rule: { verbs: ['get'], apiGroups: [''], resources: ['*/log'] },
      attributes: getPods,
      allowed: false,
    },
    {
      name: 'pods/* is not a wildcard',
      rule: { verbs: ['get'], apiGroups: [''], resources: ['pods/*'] },
      attributes: podLog,
      allowed: false,
    },
    {
      name: 'resource rule does not grant paths',
      rule: { verbs: ['get'], apiGroups: ['*'], resources: ['*'] },
      attributes: pathRequest(alice, 'get', '/healthz'),
      allowed: false,
    },
    {
      name: 'exact non-resource URL',
      rule: { verbs: ['get'], nonResourceURLs: ['/healthz'] },
      attributes: pathRequest(alice, 'get', '/healthz'),
      allowed: true,
    },
    {
      name: 'non-resource URL is not a prefix',
      rule: { verbs: ['get'], nonResourceURLs: ['/healthz'] },
      attributes: pathRequest(alice, 'get', '/healthz/etcd'),
      allowed: false,
    },
    {
      name: 'trailing * is a prefix',
      rule: { verbs: ['get'], nonResourceURLs: ['/healthz/*'] },
      attributes: pathRequest(alice, 'get', '/healthz/etcd'),
      allowed: true,
    },
    {
      name: 'trailing * after a partial segment',
      rule: { verbs: ['get'], nonResourceURLs: ['/api*'] },
      attributes: pathRequest(alice, 'get', '/apis/apps'),
      allowed: true,
    },
    {
      name: 'trailing * needs the prefix',
      rule: { verbs: ['get'], nonResourceURLs: ['/healthz/*'] },
      attributes: pathRequest(alice, 'get', '/healthz'),
      allowed: false,
    },
    {
      name: 'non-resource wildcard',
      rule: { verbs: ['get'], nonResourceURLs: ['*'] },
      attributes: pathRequest(alice, 'get', '/anything'),
      allowed: true,
    },
    {
      name: 'non-resource verb must match',
      rule: { verbs: ['get'], nonResourceURLs: ['*'] },
      attributes: pathRequest(alice, 'post', '/anything'),
      allowed: false,
    },
    {
      name: 'non-resource rule does not grant resources',
      rule: { verbs: ['*'], nonResourceURLs: ['*'] },
      attributes: getPods,
      allowed: false,
    },
  ];

for (const row of table) {
  void t.test(`rbac rules - ${row.name} ${row.allowed ? 'allows' : 'denies'}`, (t) => {
    t.equal(allowedBy(row.rule, row.attributes), row.allowed);
    t.end();
  });
}
