// The wording of 403 answers, as kube-apiserver writes it.
import t from 'tap';
import type { UserInfo } from '../../devcluster/auth/index.js';
import {
  forbiddenMessage,
  forbiddenStatus,
  forbiddenStatusMessage,
} from '../../devcluster/auth/index.js';
import { pathRequest, resourceRequest } from './devcluster-auth-fixtures.js';

const sa: UserInfo = { username: 'system:serviceaccount:ns:sa', groups: [] };

void t.test('forbidden message - cluster-scoped resource', (t) => {
  const attributes = resourceRequest(sa, 'create', {
    apiGroup: 'rbac.authorization.k8s.io',
    resource: 'clusterroles',
  });
  t.equal(
    forbiddenMessage(attributes),
    'User "system:serviceaccount:ns:sa" cannot create resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope',
  );
  t.end();
});

void t.test('forbidden message - namespaced resource', (t) => {
  const attributes = resourceRequest(sa, 'list', { resource: 'secrets', namespace: 'ns' });
  t.equal(
    forbiddenMessage(attributes),
    'User "system:serviceaccount:ns:sa" cannot list resource "secrets" in API group "" in the namespace "ns"',
  );
  t.end();
});

void t.test('forbidden message - subresource is written resource/subresource', (t) => {
  const attributes = resourceRequest(sa, 'get', {
    resource: 'pods',
    subresource: 'log',
    namespace: 'ns',
    name: 'p',
  });
  t.equal(
    forbiddenMessage(attributes),
    'User "system:serviceaccount:ns:sa" cannot get resource "pods/log" in API group "" in the namespace "ns"',
  );
  t.end();
});

void t.test('forbidden message - non-resource path', (t) => {
  t.equal(
    forbiddenMessage(pathRequest(sa, 'get', '/foo')),
    'User "system:serviceaccount:ns:sa" cannot get path "/foo"',
  );
  t.end();
});

void t.test('forbidden message - quotes are escaped as Go does', (t) => {
  const odd: UserInfo = { username: 'we"ird\\user\n', groups: [] };
  t.equal(
    forbiddenMessage(pathRequest(odd, 'get', '/')),
    'User "we\\"ird\\\\user\\n" cannot get path "/"',
  );
  t.end();
});

void t.test(
  'forbidden status message - named object of a group is prefixed resource.group "name"',
  (t) => {
    const attributes = resourceRequest(sa, 'get', {
      apiGroup: 'apps',
      resource: 'deployments',
      subresource: 'scale',
      namespace: 'ns',
      name: 'web',
    });
    t.equal(
      forbiddenStatusMessage(attributes),
      'deployments.apps "web" is forbidden: User "system:serviceaccount:ns:sa" cannot get resource "deployments/scale" in API group "apps" in the namespace "ns"',
    );
    t.end();
  },
);

void t.test('forbidden status message - unnamed core request is prefixed resource only', (t) => {
  t.equal(
    forbiddenStatusMessage(resourceRequest(sa, 'list', { resource: 'pods', namespace: 'ns' })),
    'pods is forbidden: User "system:serviceaccount:ns:sa" cannot list resource "pods" in API group "" in the namespace "ns"',
  );
  t.end();
});

void t.test('forbidden status message - non-resource request is prefixed forbidden', (t) => {
  t.equal(
    forbiddenStatusMessage(pathRequest(sa, 'get', '/')),
    'forbidden: User "system:serviceaccount:ns:sa" cannot get path "/"',
  );
  t.end();
});

void t.test('forbidden status message - RBAC evaluation errors are appended', (t) => {
  const attributes = resourceRequest(sa, 'list', { resource: 'pods', namespace: 'ns' });
  const message = forbiddenStatusMessage(attributes, {
    allowed: false,
    reason: '',
    evaluationError: 'RBAC: clusterrole.rbac.authorization.k8s.io "x" not found',
  });
  t.equal(
    message,
    'pods is forbidden: User "system:serviceaccount:ns:sa" cannot list resource "pods" in API group "" in the namespace "ns": RBAC: clusterrole.rbac.authorization.k8s.io "x" not found',
  );
  t.end();
});

void t.test('forbidden status - Status object with details of the resource', (t) => {
  const attributes = resourceRequest(sa, 'delete', {
    apiGroup: 'rbac.authorization.k8s.io',
    resource: 'clusterroles',
    name: 'admin',
  });
  t.same(forbiddenStatus(attributes), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message:
      'clusterroles.rbac.authorization.k8s.io "admin" is forbidden: User "system:serviceaccount:ns:sa" cannot delete resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope',
    reason: 'Forbidden',
    details: { name: 'admin', group: 'rbac.authorization.k8s.io', kind: 'clusterroles' },
    code: 403,
  });
  t.end();
});

void t.test('forbidden status - non-resource request has empty details', (t) => {
  t.same(forbiddenStatus(pathRequest(sa, 'get', '/x'))['details'], {});
  t.end();
});
