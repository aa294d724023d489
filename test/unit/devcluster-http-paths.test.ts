import t from 'tap';
import { parseResourcePath, requestTarget } from '../../devcluster/server/http/request.js';

void t.test('http paths - request targets split as URL parsing splits them', (t) => {
  const targets = [
    '/api/v1/namespaces/default/configmaps',
    '/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=12',
    '/apis/operators.coreos.com/v1alpha1/namespaces/olm/clusterserviceversions/etcd.v0.9.4',
    '/api/v1/namespaces?labelSelector=a%3Db%2Cc+in+(x,y)&fieldSelector=metadata.name%3Dx',
    '/api/v1/namespaces?labelSelector=app in (a,b)',
    '/api/v1/namespaces/default/configmaps/a%2Fb',
    '/api/v1/../v1/namespaces',
    '/api/v1/./namespaces',
    '/api/v1/namespaces/x y',
    '//api/v1/namespaces',
    '/api/v1/namespaces#fragment',
    '/api/v1/namespaces?x=1#fragment',
    '/apis/a/b/c?dryRun=All&dryRun=All&fieldManager=kubectl-client-side-apply',
    '/',
    '/version?timeout=32s',
  ];
  for (const target of targets) {
    const url = new URL(target, 'https://devcluster');
    const split = requestTarget(target);
    t.equal(split.pathname, url.pathname, `path of ${target}`);
    t.same([...split.query], [...url.searchParams], `query of ${target}`);
  }
  t.end();
});

void t.test('http paths - resource paths with namespaces, watch prefix and subresources', (t) => {
  t.same(parseResourcePath('/api/v1/namespaces/default/pods/p1/status'), {
    group: '',
    version: 'v1',
    namespace: 'default',
    resource: 'pods',
    name: 'p1',
    subresource: 'status',
    watchPath: false,
  });
  t.same(parseResourcePath('/apis/apps/v1/watch/namespaces/ns/deployments'), {
    group: 'apps',
    version: 'v1',
    namespace: 'ns',
    resource: 'deployments',
    name: undefined,
    subresource: '',
    watchPath: true,
  });
  // A namespace's own subresources are not a namespaced path.
  t.same(parseResourcePath('/api/v1/namespaces/ns/finalize'), {
    group: '',
    version: 'v1',
    namespace: undefined,
    resource: 'namespaces',
    name: 'ns',
    subresource: 'finalize',
    watchPath: false,
  });
  t.equal(parseResourcePath('/api/v1/namespaces/ns/configmaps/a%3Ab')?.name, 'a:b');
  t.equal(parseResourcePath('/api/v1/namespaces/ns/pods/p/status/extra'), undefined);
  t.equal(parseResourcePath('/apis/apps'), undefined);
  t.equal(parseResourcePath('/api/v1'), undefined);
  t.equal(parseResourcePath('/openapi/v2'), undefined);
  t.end();
});
