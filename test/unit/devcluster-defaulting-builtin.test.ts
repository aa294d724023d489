// kube-apiserver 1.30's defaulting of built-in kinds, on create and on every update (PUT, merge
// patch, JSON patch, apply) alike.
import t from 'tap';
import { ApiCore, systemWrite } from '../../devcluster/api/core.js';
import type { PatchType } from '../../devcluster/api/types.js';
import type { JsonObject } from '../../shared/kube/json.js';
import { builtinResourceTypes } from '../../devcluster/resources/builtin.js';
import { ResourceRegistry } from '../../devcluster/resources/registry.js';
import { ObjectStore } from '../../devcluster/storage/store.js';

function setup() {
  const core = new ApiCore({
    store: new ObjectStore(),
    registry: new ResourceRegistry(builtinResourceTypes()),
  });
  core.create(core.typeOf('', 'namespaces'), '', { metadata: { name: 'default' } }, systemWrite());
  return core;
}

const specOf = (o: JsonObject) => o['spec'] as JsonObject;
const metaOf = (o: JsonObject) => o['metadata'] as JsonObject;

const deployment = (spec: JsonObject = {}): JsonObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'd' },
  spec: {
    selector: { matchLabels: { app: 'd' } },
    template: {
      metadata: { labels: { app: 'd' } },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    },
    ...spec,
  },
});

const service = (spec: JsonObject = {}): JsonObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 's' },
  spec: { selector: { app: 's' }, ports: [{ port: 80 }], ...spec },
});

const rollingDefaults = {
  strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
  revisionHistoryLimit: 10,
  progressDeadlineSeconds: 600,
};

function patch(core: ApiCore, resource: string, name: string, type: PatchType, body: unknown) {
  const group = resource === 'deployments' ? 'apps' : '';
  return core.patch(core.typeOf(group, resource), 'default', name, type, JSON.stringify(body), {
    ...systemWrite(),
    fieldManager: 'm',
    force: true,
  });
}

void t.test('Deployment: strategy, history and deadline defaults on create and PUT', (t) => {
  const core = setup();
  const type = core.typeOf('apps', 'deployments');
  const created = core.create(type, 'default', deployment(), systemWrite());
  t.match(specOf(created), rollingDefaults);
  const put = core.update(type, 'default', 'd', deployment(), systemWrite());
  t.match(specOf(put), rollingDefaults, 'a PUT without them gets them back');
  t.equal(metaOf(put)['generation'], 1, 'the defaulted spec is unchanged');
  t.end();
});

void t.test('Deployment: a partial rollingUpdate is completed, on create and PUT', (t) => {
  const core = setup();
  const type = core.typeOf('apps', 'deployments');
  const partial = { strategy: { rollingUpdate: { maxSurge: 1 } } };
  const created = core.create(type, 'default', deployment(partial), systemWrite());
  const expected = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: '25%' } };
  t.same(specOf(created)['strategy'], expected);
  const put = core.update(type, 'default', 'd', deployment(partial), systemWrite());
  t.same(specOf(put)['strategy'], expected);
  t.end();
});

void t.test('Deployment: Recreate gets no rollingUpdate, on create and PUT', (t) => {
  const core = setup();
  const type = core.typeOf('apps', 'deployments');
  const recreate = { strategy: { type: 'Recreate' } };
  const created = core.create(type, 'default', deployment(recreate), systemWrite());
  t.same(specOf(created)['strategy'], { type: 'Recreate' });
  const put = core.update(type, 'default', 'd', deployment(recreate), systemWrite());
  t.same(specOf(put)['strategy'], { type: 'Recreate' });
  t.match(specOf(put), { revisionHistoryLimit: 10, progressDeadlineSeconds: 600 });
  t.end();
});

void t.test('Deployment: defaults come back after merge patch, JSON patch and apply', (t) => {
  const core = setup();
  core.create(core.typeOf('apps', 'deployments'), 'default', deployment(), systemWrite());
  const merged = patch(core, 'deployments', 'd', 'merge', {
    spec: { strategy: null, revisionHistoryLimit: null, progressDeadlineSeconds: null },
  });
  t.match(specOf(merged), rollingDefaults, 'merge patch');
  const removed = patch(core, 'deployments', 'd', 'json', [
    { op: 'remove', path: '/spec/strategy/rollingUpdate' },
  ]);
  t.match(specOf(removed), rollingDefaults, 'JSON patch');
  const toRecreate = patch(core, 'deployments', 'd', 'json', [
    { op: 'replace', path: '/spec/strategy', value: { type: 'Recreate' } },
  ]);
  t.same(specOf(toRecreate)['strategy'], { type: 'Recreate' });
  const applied = patch(core, 'deployments', 'd', 'apply', deployment());
  t.match(specOf(applied), { revisionHistoryLimit: 10, progressDeadlineSeconds: 600 }, 'apply');
  t.end();
});

const serviceDefaults = {
  type: 'ClusterIP',
  ipFamilies: ['IPv4'],
  ipFamilyPolicy: 'SingleStack',
  internalTrafficPolicy: 'Cluster',
  sessionAffinity: 'None',
  ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
};

void t.test('Service: defaults on create and on PUT', (t) => {
  const core = setup();
  const type = core.typeOf('', 'services');
  const created = core.create(type, 'default', service(), systemWrite());
  t.match(specOf(created), serviceDefaults);
  const ip = specOf(created)['clusterIP'];
  t.type(ip, 'string');
  t.same(specOf(created)['clusterIPs'], [ip]);
  const put = core.update(type, 'default', 's', service(), systemWrite());
  t.match(specOf(put), serviceDefaults, 'a PUT without them gets them back');
  t.equal(specOf(put)['clusterIP'], ip);
  t.end();
});

void t.test('Service: defaults come back after JSON patch, merge patch and apply', (t) => {
  const core = setup();
  core.create(core.typeOf('', 'services'), 'default', service(), systemWrite());
  const removed = patch(core, 'services', 's', 'json', [
    { op: 'remove', path: '/spec/ipFamilies' },
    { op: 'remove', path: '/spec/ipFamilyPolicy' },
    { op: 'remove', path: '/spec/internalTrafficPolicy' },
  ]);
  t.match(specOf(removed), serviceDefaults, 'JSON patch');
  const merged = patch(core, 'services', 's', 'merge', {
    spec: { ports: [{ port: 81 }], sessionAffinity: null },
  });
  t.match(specOf(merged), {
    ...serviceDefaults,
    ports: [{ port: 81, protocol: 'TCP', targetPort: 81 }],
  });
  // The port 81 entry stays: the merge patch's manager owns it.
  const applied = specOf(patch(core, 'services', 's', 'apply', service()));
  t.match(applied, { ...serviceDefaults, ports: [] }, 'apply');
  t.match(applied['ports'], [
    { port: 81, protocol: 'TCP' },
    { port: 80, protocol: 'TCP' },
  ]);
  t.end();
});

void t.test('Service: traffic policies by type; ExternalName gets no IP fields', (t) => {
  const core = setup();
  const type = core.typeOf('', 'services');
  const create = (name: string, spec: JsonObject) =>
    specOf(core.create(type, 'default', { ...service(spec), metadata: { name } }, systemWrite()));
  t.match(create('np', { type: 'NodePort' }), {
    ...serviceDefaults,
    type: 'NodePort',
    externalTrafficPolicy: 'Cluster',
  });
  t.match(create('lb', { type: 'LoadBalancer' }), {
    ...serviceDefaults,
    type: 'LoadBalancer',
    externalTrafficPolicy: 'Cluster',
    allocateLoadBalancerNodePorts: true,
  });
  const external = create('ext', { type: 'ExternalName', externalName: 'example.com' });
  t.match(external, { sessionAffinity: 'None', ports: [{ protocol: 'TCP', targetPort: 80 }] });
  for (const field of ['ipFamilies', 'ipFamilyPolicy', 'internalTrafficPolicy', 'clusterIP'])
    t.notOk(field in external, `ExternalName has no ${field}`);
  t.end();
});

void t.test('Service: headless Services get IP families, on create and PUT', (t) => {
  const core = setup();
  const type = core.typeOf('', 'services');
  const headless = { ...service({ clusterIP: 'None' }), metadata: { name: 'h' } };
  const expected = { ...serviceDefaults, clusterIP: 'None', clusterIPs: ['None'] };
  t.match(specOf(core.create(type, 'default', headless, systemWrite())), expected);
  t.match(specOf(core.update(type, 'default', 'h', headless, systemWrite())), expected);
  const selectorless = { ...service({ clusterIP: 'None' }), metadata: { name: 'hs' } };
  delete specOf(selectorless)['selector'];
  const selectorlessSpec = specOf(core.create(type, 'default', selectorless, systemWrite()));
  t.match(selectorlessSpec, { ...expected, ipFamilyPolicy: 'RequireDualStack' });
  // kube gives a headless Service without selector both families, even on a single-stack cluster.
  t.same(selectorlessSpec['ipFamilies'], ['IPv4', 'IPv6']);
  t.end();
});

void t.test('Job: SetDefaults_Job applies on PUT too', (t) => {
  const core = setup();
  const type = core.typeOf('batch', 'jobs');
  const job: JsonObject = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'j' },
    spec: {
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i' }] } },
    },
  };
  const created = core.create(type, 'default', structuredClone(job), systemWrite());
  const body = structuredClone(created);
  const spec = specOf(body);
  for (const key of ['backoffLimit', 'completionMode', 'suspend', 'podReplacementPolicy'])
    delete spec[key];
  const put = core.update(type, 'default', 'j', body, systemWrite());
  t.match(specOf(put), {
    backoffLimit: 6,
    completionMode: 'NonIndexed',
    suspend: false,
    podReplacementPolicy: 'TerminatingOrFailed',
  });
  t.end();
});
