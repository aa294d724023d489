// The catalog function's pure decisions: status as upstream writes it, registry objects,
// polling, and no writes when nothing changed.
import t from 'tap';
import { decideCatalogSource } from '../../functions/catalog/decide.js';
import { planRegistry } from '../../functions/catalog/registry-plan.js';
import { readNeeded, summarizeWarnings } from '../../functions/catalog/source-reads.js';
import type {
  CatalogSnapshot,
  CatalogStatus,
  RegistryObservation,
  SyncRecord,
} from '../../functions/catalog/types.js';
import {
  registryNetworkPolicies,
  registryPod,
  registryService,
  registryServiceAccount,
  registryServiceName,
  specHash,
  type RegistrySource,
} from '../../functions/catalog/registry-pod.js';
import { sourceKindOf } from '../../functions/catalog/spec.js';
import { catalogSourceSchema } from '../../shared/api/catalogsource.js';
import { buildCatalogFromTexts } from '../../shared/catalog/index.js';
import type { CatalogIndexRecord } from '../../shared/handoff/index.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';

const now = new Date('2026-11-22T10:00:00.000Z');
const timing = {
  resyncMs: 900_000,
  retryMs: 30_000,
  connectingRetryMs: 5_000,
  updatePodRequeueMs: 30_000,
};

function object(spec: Record<string, unknown>, status?: CatalogStatus): KubeObject {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    metadata: { name: 'cat', namespace: 'olm', uid: 'u1', resourceVersion: '7' },
    spec,
    ...(status === undefined ? {} : { status }),
  };
}

function snapshot(o: KubeObject, extra: Partial<CatalogSnapshot> = {}): CatalogSnapshot {
  const source = catalogSourceSchema.parse(o);
  const kind = sourceKindOf(source.spec);
  return {
    cluster: 'c1',
    namespace: 'olm',
    name: 'cat',
    now,
    globalCatalogNamespace: 'olm',
    timing,
    object: o,
    source,
    invalid: kind instanceof Error ? kind.message : undefined,
    kind: kind instanceof Error ? undefined : kind,
    read: { kind: 'none' },
    sync: undefined,
    record: undefined,
    ...extra,
  };
}

const statusWrite = (writes: readonly Write[]) => {
  const w = writes.find((x) => x.op === 'updateStatus');
  return w !== undefined && 'object' in w ? (w.object['status'] as CatalogStatus) : undefined;
};

const fbc = {
  'c.json': [
    '{"schema":"olm.package","name":"a","defaultChannel":"stable"}',
    '{"schema":"olm.channel","package":"a","name":"stable","entries":[{"name":"a.v1","replaces":"a.v0"}]}',
    '{"schema":"olm.bundle","package":"a","name":"a.v1","image":"example.com/a:1","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}}]}',
  ].join('\n'),
};

function built(sourceVersion: string) {
  const result = buildCatalogFromTexts(fbc);
  return {
    kind: 'built' as const,
    built: {
      sourceVersion,
      index: result.index,
      content: result.content,
      warnings: result.warnings,
      durationMs: 1,
    },
  };
}

t.test('catalog decide - an invalid spec is SpecInvalidError, unhealthy, not retried', (t) => {
  const d = decideCatalogSource(snapshot(object({ sourceType: 'nope' })));
  t.same(statusWrite(d.writes.kube), {
    reason: 'SpecInvalidError',
    message: 'unknown sourcetype: nope',
  });
  t.match(d.writes.record, { healthy: false, digest: null, global: true, priority: 0 });
  t.equal(d.requeueAfterMs, undefined);
  // Deciding again on the written status: nothing to write.
  const again = decideCatalogSource(
    snapshot(
      object(
        { sourceType: 'nope' },
        { reason: 'SpecInvalidError', message: 'unknown sourcetype: nope' },
      ),
    ),
  );
  t.same(again.writes.kube, []);
  t.end();
});

t.test('catalog decide - a missing ConfigMap is ConfigMapError and retried', (t) => {
  const d = decideCatalogSource(
    snapshot(object({ sourceType: 'configmap', configMap: 'cm' }), {
      configMap: { object: undefined },
    }),
  );
  t.same(statusWrite(d.writes.kube), {
    reason: 'ConfigMapError',
    message: 'failed to get catalog config map cm: configmaps "cm" not found',
  });
  t.equal(d.requeueAfterMs, 30_000);
  t.end();
});

t.test('catalog decide - a ConfigMap is adopted before it is read', (t) => {
  const cm: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm', namespace: 'olm', uid: 'cm1', resourceVersion: '3' },
  };
  const d = decideCatalogSource(
    snapshot(object({ sourceType: 'configmap', configMap: 'cm' }), { configMap: { object: cm } }),
  );
  t.match(d.writes.kube, [
    {
      op: 'update',
      object: {
        metadata: {
          labels: { 'olm.managed': 'false' },
          ownerReferences: [
            {
              kind: 'CatalogSource',
              name: 'cat',
              uid: 'u1',
              controller: false,
              blockOwnerDeletion: false,
            },
          ],
        },
      },
    },
  ]);
  t.equal(d.requeueAfterMs, 0, 'read at once on the next round');
  t.end();
});

t.test(
  'catalog decide - a built ConfigMap catalog is READY with its reference and warnings',
  (t) => {
    const cm: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'cm',
        namespace: 'olm',
        uid: 'cm1',
        resourceVersion: '3',
        labels: { 'olm.managed': 'false' },
        ownerReferences: [
          {
            apiVersion: 'operators.coreos.com/v1alpha1',
            kind: 'CatalogSource',
            name: 'cat',
            uid: 'u1',
          },
        ],
      },
    };
    const read = built('configmap:cm1@3');
    const d = decideCatalogSource(
      snapshot(object({ sourceType: 'configmap', configMap: 'cm', priority: -2 }), {
        configMap: { object: cm },
        read,
      }),
    );
    const status = statusWrite(d.writes.kube);
    t.same(status, {
      message: summarizeWarnings(read.built.warnings),
      configMapReference: {
        name: 'cm',
        namespace: 'olm',
        uid: 'cm1',
        resourceVersion: '3',
        lastUpdateTime: '2026-11-22T10:00:00Z',
      },
      connectionState: { lastObservedState: 'READY', lastConnect: '2026-11-22T10:00:00Z' },
    });
    t.match(
      status?.message,
      /^catalog loaded with 2 warnings \(bundle-csv-missing ×1, replaces-not-in-channel ×1\); first: bundle "a.v1" has no ClusterServiceVersion/,
    );
    t.match(d.writes.record, {
      digest: read.built.index.digest,
      healthy: true,
      packages: 1,
      bundles: 1,
      priority: -2,
      updatedAt: '2026-11-22T10:00:00Z',
    });
    t.match(d.writes.sync, {
      sourceVersion: 'configmap:cm1@3',
      digest: read.built.index.digest,
      fetchedAt: '2026-11-22T10:00:00Z',
    });
    t.equal(d.writes.built, read.built);

    // Next round: nothing read (same version), the status already says it all.
    const sync = d.writes.sync as SyncRecord;
    const record = d.writes.record as CatalogIndexRecord;
    const later = new Date(now.getTime() + 60_000);
    const again = decideCatalogSource({
      ...snapshot(object({ sourceType: 'configmap', configMap: 'cm', priority: -2 }, status), {
        configMap: { object: cm },
        sync,
        record,
      }),
      now: later,
    });
    t.same(again.writes.kube, [], 'no status write');
    t.same(again.writes.record, record, 'the same record (its put is a no-op)');
    t.equal(again.writes.sync, undefined);
    t.end();
  },
);

t.test(
  'catalog decide - an unreachable registry is TRANSIENT_FAILURE; lastConnect moves only on change',
  (t) => {
    const spec = { sourceType: 'grpc', address: 'reg:50051' };
    const read = {
      kind: 'unreachable' as const,
      address: 'reg:50051',
      message: 'connection refused',
    };
    const d = decideCatalogSource(snapshot(object(spec), { read }));
    const status = statusWrite(d.writes.kube);
    t.same(status, {
      reason: 'RegistryServerError',
      message: "couldn't connect to registry at reg:50051: connection refused",
      registryService: { protocol: 'grpc', createdAt: '2026-11-22T10:00:00Z' },
      connectionState: {
        address: 'reg:50051',
        lastObservedState: 'TRANSIENT_FAILURE',
        lastConnect: '2026-11-22T10:00:00Z',
      },
    });
    t.equal(d.requeueAfterMs, 30_000);
    const again = decideCatalogSource({
      ...snapshot(object(spec, status), { read }),
      now: new Date(now.getTime() + 30_000),
    });
    t.same(again.writes.kube, [], 'a repeated failure writes nothing');
    t.end();
  },
);

t.test('catalog decide - a bad poll interval is InvalidIntervalError, polling at 15m', (t) => {
  const spec = {
    sourceType: 'grpc',
    address: 'reg:50051',
    updateStrategy: { registryPoll: { interval: 'soon' } },
  };
  const d = decideCatalogSource(snapshot(object(spec), { read: built('grpc:reg:50051') }));
  t.match(statusWrite(d.writes.kube), {
    reason: 'InvalidIntervalError',
    message:
      /^error parsing spec.updateStrategy.registryPoll.interval. Using the default value of 15m0s instead. Error: time: invalid duration "soon"$/,
    connectionState: { lastObservedState: 'READY' },
  });
  t.equal(d.requeueAfterMs, 900_000);
  t.match(d.writes.record, { healthy: true }, 'still served');
  t.end();
});

t.test('catalog decide - a deleted CatalogSource removes its record and bookkeeping', (t) => {
  const d = decideCatalogSource({
    ...snapshot(object({ sourceType: 'grpc', address: 'a:1' })),
    object: undefined,
  });
  t.same(d.writes, { kube: [], record: null, sync: null });
  t.end();
});

t.test('catalog decide - a source is read again when changed, failing or due', (t) => {
  const sync: SyncRecord = {
    sourceVersion: 'v1',
    digest: 'd1',
    fetchedAt: '2026-11-22T09:59:00Z',
    summary: '',
  };
  const record = { digest: 'd1' } as CatalogIndexRecord;
  const base = { version: 'v1', sync, record, observedState: 'READY', now, intervalMs: 120_000 };
  t.equal(readNeeded(base), false, 'unchanged and not due');
  t.equal(readNeeded({ ...base, version: 'v2' }), true, 'the source changed');
  t.equal(readNeeded({ ...base, sync: undefined }), true, 'never read');
  t.equal(
    readNeeded({ ...base, record: { digest: 'other' } as CatalogIndexRecord }),
    true,
    'record differs',
  );
  t.equal(readNeeded({ ...base, observedState: 'TRANSIENT_FAILURE' }), true, 'retry a failure');
  t.equal(readNeeded({ ...base, intervalMs: 60_000 }), true, 'a poll is due');
  t.equal(readNeeded({ ...base, intervalMs: undefined }), false, 'configmaps are not polled');
  t.end();
});

const source: RegistrySource = {
  name: 'my.cat',
  namespace: 'olm',
  uid: 'u1',
  annotations: { team: 'a' },
  spec: { sourceType: 'grpc', image: 'quay.io/x/cat:v1', secrets: ['pull'] },
};

function observed(extra: Partial<RegistryObservation> = {}): RegistryObservation {
  return {
    serviceAccount: undefined,
    service: undefined,
    pods: [],
    updatePods: [],
    restrictedByDefault: false,
    ...extra,
  };
}

function running(pod: KubeObject, uid: string, imageID = ''): KubeObject {
  return {
    ...pod,
    metadata: { ...pod.metadata, name: `${source.name}-${uid}`, uid },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [{ imageID }],
    },
  };
}

const account = registryServiceAccount(source);
const desired = registryPod(
  source,
  { name: 'my.cat', imagePullSecrets: [{ name: 'pull' }] },
  false,
);

t.test('catalog registry - upstream objects: service account, pod, service', (t) => {
  t.match(account, {
    metadata: {
      name: 'my.cat',
      ownerReferences: [{ kind: 'CatalogSource', controller: true, blockOwnerDeletion: true }],
    },
    imagePullSecrets: [{ name: 'pull' }],
  });
  t.match(desired, {
    metadata: {
      generateName: 'my.cat-',
      labels: {
        'olm.catalogSource': 'my.cat',
        'olm.managed': 'true',
        'olm.pod-spec-hash': /^[0-9a-f]{16}$/,
      },
      annotations: { team: 'a', 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'true' },
      ownerReferences: [
        { kind: 'CatalogSource', uid: 'u1', controller: true, blockOwnerDeletion: false },
      ],
    },
    spec: {
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      serviceAccountName: 'my.cat',
      imagePullSecrets: [{ name: 'pull' }],
      containers: [
        {
          name: 'registry-server',
          imagePullPolicy: 'Always',
          resources: { requests: { cpu: '10m', memory: '50Mi' } },
          livenessProbe: { initialDelaySeconds: 10 },
          startupProbe: { failureThreshold: 10, periodSeconds: 10 },
        },
      ],
    },
  });
  const service = registryService(source);
  t.equal(service.metadata.name, registryServiceName('my.cat'));
  t.equal(service.metadata.name, 'my-cat');
  t.match(service.metadata.ownerReferences, [{ controller: false, blockOwnerDeletion: false }]);
  t.end();
});

t.test('catalog registry - upstream NetworkPolicies; a drifted one is put back', (t) => {
  const [grpc, unpack] = registryNetworkPolicies(source);
  t.match(grpc, {
    metadata: {
      name: 'my.cat-grpc-server',
      labels: { 'olm.managed': 'true', 'olm.catalogSource': 'my.cat' },
    },
    spec: {
      podSelector: { matchLabels: { 'olm.catalogSource': 'my.cat' } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [{ ports: [{ protocol: 'TCP', port: 50051 }] }],
    },
  });
  t.notOk(
    (grpc?.['spec'] as Record<string, unknown>)['egress'],
    'nothing may leave an image registry',
  );
  t.match(unpack, { metadata: { name: 'my.cat-unpack-bundles' }, spec: { egress: [{}] } });
  const drifted = {
    ...grpc!,
    metadata: { ...grpc!.metadata, resourceVersion: '9' },
    spec: { podSelector: {} },
  };
  const plan = planRegistry(
    source,
    observed({
      serviceAccount: account,
      service: registryService(source),
      pods: [running(desired, 'p1')],
      networkPolicies: new Map([
        ['my.cat-grpc-server', drifted],
        ['my.cat-unpack-bundles', unpack!],
      ]),
    }),
    {},
    now,
    timing,
  );
  t.match(plan.writes, [
    {
      op: 'update',
      object: {
        metadata: { name: 'my.cat-grpc-server', resourceVersion: '9' },
        spec: grpc!['spec'],
      },
    },
  ]);
  t.end();
});

t.test('catalog registry - restricted namespaces and grpcPodConfig shape the pod', (t) => {
  const restricted = registryPod(source, { name: 'my.cat' }, true);
  t.match(restricted['spec'], {
    securityContext: {
      seccompProfile: { type: 'RuntimeDefault' },
      runAsUser: 1001,
      runAsNonRoot: true,
    },
    containers: [
      { securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } },
    ],
  });
  const configured = registryPod(
    {
      ...source,
      annotations: { 'operatorframework.io/priorityclass': 'high' },
      spec: {
        ...source.spec,
        grpcPodConfig: {
          securityContextConfig: 'legacy',
          memoryTarget: '80Mi',
          nodeSelector: { zone: 'a' },
        },
      },
    },
    { name: 'my.cat' },
    true,
  );
  const spec = configured['spec'] as Record<string, unknown>;
  t.notOk(spec['securityContext'], 'legacy chosen explicitly wins over the namespace default');
  t.same(spec['nodeSelector'], { zone: 'a' });
  t.equal(spec['priorityClassName'], 'high');
  t.match(spec, {
    containers: [
      {
        env: [{ name: 'GOMEMLIMIT', value: '80MiB' }],
        resources: { requests: { memory: '80Mi' } },
      },
    ],
  });
  t.not(
    configured.metadata.labels?.['olm.pod-spec-hash'],
    desired.metadata.labels?.['olm.pod-spec-hash'],
  );
  t.equal(
    specHash({ a: 1, b: [1, 2] }),
    specHash({ b: [1, 2], a: 1 }),
    'key order does not matter',
  );
  t.end();
});

t.test('catalog registry - a new source gets all objects; a current one gets none', (t) => {
  const first = planRegistry(source, observed({ networkPolicies: new Map() }), {}, now, timing);
  t.same(
    first.writes.map((w) => `${w.op} ${'object' in w ? w.object.kind : w.ref.kind}`),
    [
      'create ServiceAccount',
      'create Pod',
      'create NetworkPolicy',
      'create NetworkPolicy',
      'create Service',
    ],
  );
  t.equal(first.servingPod, undefined, 'not readable until the pod is ready');
  t.same(first.registryService, {
    protocol: 'grpc',
    serviceName: 'my-cat',
    serviceNamespace: 'olm',
    port: '50051',
    createdAt: '2026-11-22T10:00:00Z',
  });

  const pod = running(desired, 'p1');
  const steady = planRegistry(
    source,
    observed({ serviceAccount: account, service: registryService(source), pods: [pod] }),
    first.registryService === undefined ? {} : { registryService: first.registryService },
    now,
    timing,
  );
  t.same(steady.writes, [], 'nothing recreated');
  t.equal(steady.servingPod, pod);
  t.equal(steady.registryService, undefined);

  const lostStatus = planRegistry(
    source,
    observed({ serviceAccount: account, service: registryService(source), pods: [pod] }),
    {},
    now,
    timing,
  );
  t.same(lostStatus.writes, [], 'a lost status write does not recreate the pod');
  t.ok(lostStatus.registryService, 'the status is written again');
  t.end();
});

t.test('catalog registry - a pod of an old image or spec is replaced', (t) => {
  const old = running({ ...desired, spec: { containers: [{ image: 'quay.io/x/cat:v0' }] } }, 'old');
  const plan = planRegistry(
    source,
    observed({ serviceAccount: account, service: registryService(source), pods: [old] }),
    {},
    now,
    timing,
  );
  t.match(plan.writes, [
    { op: 'delete', ref: { kind: 'Pod', name: 'my.cat-old' }, preconditions: { uid: 'old' } },
    { op: 'create', object: { kind: 'Pod' } },
  ]);
  t.end();
});

t.test(
  'catalog registry - polling starts an update pod and swaps it in when the image changed',
  (t) => {
    const polled: RegistrySource = {
      ...source,
      spec: { ...source.spec, updateStrategy: { registryPoll: { interval: '10m' } } },
    };
    const pollPod = registryPod(
      polled,
      { name: 'my.cat', imagePullSecrets: [{ name: 'pull' }] },
      false,
    );
    const serving = running(pollPod, 'p1', 'sha256:old');
    const base = { serviceAccount: account, service: registryService(polled), pods: [serving] };
    const registryStatus = {
      protocol: 'grpc',
      serviceName: 'my-cat',
      serviceNamespace: 'olm',
      port: '50051',
    };

    const due = planRegistry(
      polled,
      observed(base),
      { registryService: registryStatus },
      now,
      timing,
    );
    t.match(due.writes, [
      {
        op: 'create',
        object: {
          metadata: {
            labels: {
              'olm.catalogSource': '',
              'catalogsource.operators.coreos.com/update': 'my.cat',
            },
          },
        },
      },
    ]);
    t.equal(due.polled, true);
    t.equal(due.requeueAfterMs, 30_000);

    const latest = {
      registryService: registryStatus,
      latestImageRegistryPoll: '2026-11-22T09:59:30Z',
    };
    const starting = { ...running(pollPod, 'u1'), status: { phase: 'Pending' } };
    t.equal(
      planRegistry(polled, observed({ ...base, updatePods: [starting] }), latest, now, timing)
        .requeueAfterMs,
      30_000,
    );

    const changed = planRegistry(
      polled,
      observed({ ...base, updatePods: [running(pollPod, 'u1', 'sha256:new')] }),
      latest,
      now,
      timing,
    );
    t.match(changed.writes, [
      {
        op: 'patch',
        ref: { name: 'my.cat-u1' },
        patch: {
          metadata: {
            labels: {
              'olm.catalogSource': 'my.cat',
              'catalogsource.operators.coreos.com/update': '',
            },
          },
        },
      },
      { op: 'delete', ref: { name: 'my.cat-p1' } },
    ]);
    t.equal(changed.requeueAfterMs, 570_000, 'next poll in 9.5 minutes');

    const same = planRegistry(
      polled,
      observed({ ...base, updatePods: [running(pollPod, 'u1', 'sha256:old')] }),
      latest,
      now,
      timing,
    );
    t.match(
      same.writes,
      [{ op: 'delete', ref: { name: 'my.cat-u1' } }],
      'no update: the update pod goes',
    );

    const failed = { ...running(pollPod, 'u1'), status: { phase: 'Failed' } };
    const broken = planRegistry(
      polled,
      observed({ ...base, updatePods: [failed] }),
      latest,
      now,
      timing,
    );
    t.match(broken.writes, [{ op: 'delete', ref: { name: 'my.cat-u1' } }]);
    t.equal(
      broken.error,
      "couldn't ensure registry server - error ensuring updated catalog source pod: my.cat-u1: update pod my.cat-u1 in a Failed state: deleted update pod",
    );
    t.end();
  },
);

t.test('catalog decide - an image source whose pod is starting is CONNECTING', (t) => {
  const d = decideCatalogSource(
    snapshot(object({ sourceType: 'grpc', image: 'quay.io/x/cat:v1' }), { registry: observed() }),
  );
  t.match(statusWrite(d.writes.kube), {
    connectionState: { address: 'cat.olm.svc:50051', lastObservedState: 'CONNECTING' },
    registryService: { serviceName: 'cat', port: '50051' },
  });
  t.equal(d.requeueAfterMs, 5_000);
  t.end();
});

t.test('catalog decide - warnings are summarised by code, bounded in length', (t) => {
  t.equal(summarizeWarnings([]), '');
  const many = Array.from({ length: 500 }, (_, i) => ({
    code: i % 3 === 0 ? ('bundle-version-invalid' as const) : ('replaces-not-in-channel' as const),
    message: `problem ${i} `.repeat(5),
  }));
  const text = summarizeWarnings(many);
  t.match(
    text,
    /^catalog loaded with 500 warnings \(replaces-not-in-channel ×333, bundle-version-invalid ×167\); first: problem 0/,
  );
  t.ok(text.length <= 1024);
  t.end();
});
