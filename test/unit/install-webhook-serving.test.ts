// What the install function makes for a deployment serving webhooks, as upstream's
// installCertRequirements (pkg/controller/install/certresources.go, v0.26.0): the Service ports
// (containerPort in front, targetPort behind), both certificate volumes with their mount rules,
// the objects' labels, and the auth delegation bindings.
import t from 'tap';
import type { Csv } from '../../functions/install/csv-status.js';
import type { ServingCertificate } from '../../functions/install/certificates.js';
import { certifiedWrites } from '../../functions/install/csv/webhook-writes.js';
import {
  certifiedDeployments,
  existingKey,
  withCertificate,
} from '../../functions/install/csv/webhooks.js';
import type { OperatorGroup } from '../../shared/api/index.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import type { Served } from '../../shared/kube/served.js';

const csv = (webhookdefinitions: unknown[], apiservicedefinitions?: unknown): Csv =>
  ({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: 'op.v1', namespace: 'ns1', uid: 'op-uid' },
    spec: {
      webhookdefinitions,
      ...(apiservicedefinitions === undefined ? {} : { apiservicedefinitions }),
    },
  }) as unknown as Csv;

const hook = (extra: Record<string, unknown> = {}) => ({
  generateName: 'vop.example.com',
  type: 'ValidatingAdmissionWebhook',
  deploymentName: 'op',
  containerPort: 443,
  admissionReviewVersions: ['v1'],
  sideEffects: 'None',
  ...extra,
});

t.test('webhook serving - the Service port sends containerPort to targetPort', (t) => {
  t.same(certifiedDeployments(csv([hook({ targetPort: 9443 })])).get('op'), [
    { name: '443', port: 443, targetPort: 9443 },
  ]);
  t.same(
    certifiedDeployments(csv([hook()])).get('op'),
    [{ name: '443', port: 443, targetPort: 443 }],
    'containerPort when targetPort is unset (upstream before targetPort existed)',
  );
  t.same(
    certifiedDeployments(csv([hook({ targetPort: 'https' })])).get('op'),
    [{ name: '443', port: 443, targetPort: 'https' }],
    'a named port',
  );
  t.same(
    certifiedDeployments(
      csv(
        [hook({ targetPort: 9443 }), hook({ generateName: 'mop.example.com', targetPort: 9443 })],
        { owned: [{ name: 'x', group: 'g', version: 'v1', kind: 'X', deploymentName: 'op' }] },
      ),
    ).get('op'),
    [
      { name: '443', port: 443, targetPort: 443 },
      { name: '443', port: 443, targetPort: 9443 },
    ],
    "APIServices' ports first, equal ports once (upstream's getServicePorts)",
  );
  t.end();
});

interface Pod {
  template: {
    metadata: { annotations: Record<string, string> };
    spec: {
      volumes: { name: string; secret?: unknown }[];
      containers: { name: string; volumeMounts?: { name: string; mountPath: string }[] }[];
    };
  };
}

const secretVolume = (name: string, crt: string, key: string) => ({
  name,
  secret: {
    secretName: 'op-service-cert',
    items: [
      { key: 'tls.crt', path: crt },
      { key: 'tls.key', path: key },
    ],
  },
});

t.test('webhook serving - the deployment mounts both certificate volumes', (t) => {
  const spec = {
    selector: { matchLabels: { app: 'op' } },
    template: { spec: { containers: [{ name: 'manager' }, { name: 'proxy' }] } },
  };
  const out = withCertificate(spec, 'cahash', 'op-service-cert') as unknown as Pod;
  t.equal(out.template.metadata.annotations['olmcahash'], 'cahash');
  t.same(out.template.spec.volumes, [
    secretVolume('apiservice-cert', 'apiserver.crt', 'apiserver.key'),
    secretVolume('webhook-cert', 'tls.crt', 'tls.key'),
  ]);
  for (const c of out.template.spec.containers) {
    t.same(
      c.volumeMounts,
      [
        { name: 'apiservice-cert', mountPath: '/apiserver.local.config/certificates' },
        { name: 'webhook-cert', mountPath: '/tmp/k8s-webhook-server/serving-certs' },
      ],
      `container ${c.name}`,
    );
  }
  t.end();
});

t.test(
  'webhook serving - a bundle mount at the webhook path is taken over, not duplicated',
  (t) => {
    const spec = {
      template: {
        spec: {
          volumes: [
            { name: 'cert', secret: { secretName: 'bundle-cert' } },
            { name: 'webhook-cert', emptyDir: {} },
          ],
          containers: [
            {
              name: 'manager',
              volumeMounts: [
                {
                  name: 'cert',
                  mountPath: '/tmp/k8s-webhook-server/serving-certs',
                  readOnly: true,
                },
                { name: 'data', mountPath: '/data' },
              ],
            },
            {
              name: 'other',
              volumeMounts: [{ name: 'apiservice-cert', mountPath: '/elsewhere' }],
            },
          ],
        },
      },
    };
    const out = withCertificate(spec, 'cahash', 'op-service-cert') as unknown as Pod;
    t.same(
      out.template.spec.volumes,
      [
        { name: 'cert', secret: { secretName: 'bundle-cert' } },
        secretVolume('webhook-cert', 'tls.crt', 'tls.key'),
        secretVolume('apiservice-cert', 'apiserver.crt', 'apiserver.key'),
      ],
      "a volume of the same name is replaced in place; the bundle's own volume stays",
    );
    const [manager, other] = out.template.spec.containers;
    t.same(manager?.volumeMounts, [
      { name: 'webhook-cert', mountPath: '/tmp/k8s-webhook-server/serving-certs' },
      { name: 'data', mountPath: '/data' },
      { name: 'apiservice-cert', mountPath: '/apiserver.local.config/certificates' },
    ]);
    t.same(
      other?.volumeMounts,
      [
        { name: 'apiservice-cert', mountPath: '/elsewhere' },
        { name: 'webhook-cert', mountPath: '/tmp/k8s-webhook-server/serving-certs' },
      ],
      'a mount of the same name stays where the bundle put it (as upstream)',
    );
    t.end();
  },
);

const certificate: ServingCertificate = {
  caPem: 'ca',
  certPem: 'cert',
  keyPem: 'key',
  caHash: 'cahash',
  notAfter: new Date('2028-01-01T00:00:00Z'),
};

const group = {
  apiVersion: 'operators.coreos.com/v1',
  kind: 'OperatorGroup',
  metadata: { name: 'og', namespace: 'ns1', uid: 'og-uid' },
  spec: {},
} as unknown as Served<OperatorGroup>;

function writesFor(existing: KubeObject[] = []): Write[] {
  return certifiedWrites({
    csv: csv([hook({ targetPort: 9443 })]),
    namespace: 'ns1',
    deploymentSpecs: new Map([
      [
        'op',
        {
          selector: { matchLabels: { app: 'op' } },
          template: { spec: { serviceAccountName: 'op-sa', containers: [] } },
        },
      ],
    ]),
    certificates: new Map([['op', certificate]]),
    existing: new Map(
      existing.map((o) => [existingKey(o.kind, o.metadata.namespace, o.metadata.name ?? ''), o]),
    ),
    webhookConfigurations: [],
    operatorGroup: group,
    targets: [''],
  });
}

const written = (writes: Write[], kind: string, name: string): KubeObject | undefined => {
  for (const w of writes) {
    if ((w.op === 'create' || w.op === 'update') && w.object.kind === kind) {
      if (w.object.metadata.name === name) return w.object;
    }
  }
  return undefined;
};

const owner = {
  'olm.owner': 'op.v1',
  'olm.owner.namespace': 'ns1',
  'olm.owner.kind': 'ClusterServiceVersion',
  'olm.managed': 'true',
};
const sa = [{ kind: 'ServiceAccount', name: 'op-sa', namespace: 'ns1' }];

t.test('webhook serving - Service, Secret and RBAC named and labelled as upstream', (t) => {
  const writes = writesFor();
  const service = written(writes, 'Service', 'op-service');
  t.same(service?.metadata.labels, { 'olm.managed': 'true' }, 'Service: olm.managed only');
  t.same((service?.['spec'] as { ports: unknown }).ports, [
    { name: '443', port: 443, targetPort: 9443, protocol: 'TCP' },
  ]);
  t.match(service?.metadata.ownerReferences, [{ kind: 'ClusterServiceVersion', uid: 'op-uid' }]);
  const secret = written(writes, 'Secret', 'op-service-cert');
  t.same(secret?.metadata.labels, { 'olm.managed': 'true' }, 'Secret: olm.managed only');
  for (const kind of ['Role', 'RoleBinding']) {
    const o = writes.find(
      (w) =>
        w.op === 'create' &&
        w.object.kind === kind &&
        w.object.metadata.namespace === 'ns1' &&
        w.object.metadata.name === 'op-service-cert',
    );
    t.same(
      o?.op === 'create' ? o.object.metadata.labels : undefined,
      { 'olm.managed': 'true' },
      `${kind}: no owner labels, so nothing lifts it cluster-wide`,
    );
  }
  t.notOk(written(writes, 'ClusterRole', 'op-service-cert'), 'no ClusterRole for the Secret');
  const delegator = written(writes, 'ClusterRoleBinding', 'op-service-system:auth-delegator');
  t.match(delegator, {
    metadata: { labels: owner },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'system:auth-delegator',
    },
    subjects: sa,
  });
  t.equal(delegator?.metadata.ownerReferences, undefined, 'cluster-scoped: owner labels only');
  const reader = written(writes, 'RoleBinding', 'op-service-auth-reader');
  t.match(reader, {
    metadata: { namespace: 'kube-system', labels: owner },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: 'extension-apiserver-authentication-reader',
    },
    subjects: sa,
  });
  t.end();
});

// The webhook Service as the cluster holds it, with `metadata` added.
const existingService = (metadata: Partial<KubeObject['metadata']>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'op-service', namespace: 'ns1', resourceVersion: '5', ...metadata },
  spec: { clusterIP: '10.0.0.9', ports: [] },
});

t.test('webhook serving - owner labels an older olmq put on the Service are taken off', (t) => {
  const old = existingService({ labels: { ...owner, team: 'a' } });
  const service = written(writesFor([old]), 'Service', 'op-service');
  t.same(service?.metadata.labels, { 'olm.managed': 'true', team: 'a' }, 'foreign labels stay');
  t.equal((service?.['spec'] as { clusterIP?: string }).clusterIP, '10.0.0.9');
  t.end();
});

t.test('webhook serving - an update adds no annotations where there were none', (t) => {
  const existing = (annotations?: Record<string, string>): KubeObject =>
    existingService(annotations === undefined ? {} : { annotations });
  const bare = written(writesFor([existing()]), 'Service', 'op-service');
  t.ok(bare, 'the Service is updated');
  t.notOk(
    'annotations' in (bare?.metadata ?? {}),
    'no empty annotations map (upstream writes none)',
  );
  const annotated = written(writesFor([existing({ note: 'x' })]), 'Service', 'op-service');
  t.same(annotated?.metadata.annotations, { note: 'x' }, 'foreign annotations stay');
  t.end();
});
