// A webhook operator installed on the devcluster, compared with what upstream OLM v0.26.0 makes
// for it (pkg/controller/install/certresources.go): the Service sends the webhook's
// containerPort to its targetPort, the deployment mounts both certificate volumes, the service
// account gets the auth delegation bindings, the objects carry upstream's labels, and deleting
// the CSV removes what lives outside its namespace.
import t from 'tap';
import type { KubeClient } from '../../shared/kube/client.js';
import {
  installFunctionFor,
  namespaceWithOperatorGroup,
  waitForCsvPhase,
} from '../harness/install.js';
import { createInstallPlan, smallBundle, type TestBundle } from '../harness/install-plan.js';
import { waitFor } from '../harness/wait.js';

interface PodTemplate {
  template: {
    metadata: { annotations: Record<string, string> };
    spec: {
      volumes?: { name: string; secret?: { secretName: string; items?: unknown[] } }[];
      containers: { name: string; volumeMounts?: { name: string; mountPath: string }[] }[];
    };
  };
}

const csvName = 'node-maintenance-operator.v0.17.0';
const deploymentName = 'node-maintenance-operator-controller-manager';
const service = `${deploymentName}-service`;
const secretName = `${service}-cert`;
const webhookPath = '/tmp/k8s-webhook-server/serving-certs';
const apiservicePath = '/apiserver.local.config/certificates';
const rbac = 'rbac.authorization.k8s.io/v1';

async function installWebhookOperator(
  client: KubeClient,
  namespace: string,
  bundle: TestBundle,
): Promise<void> {
  await namespaceWithOperatorGroup(client, namespace, {}); // AllNamespaces
  await createInstallPlan(client, { name: 'install-hooks', namespace, bundles: [bundle] });
  await waitForCsvPhase(client, namespace, csvName, 'Succeeded', undefined, 30_000);
}

const deploymentOf = async (client: KubeClient, namespace: string): Promise<PodTemplate> => {
  const d = await client.get({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespace,
    name: deploymentName,
  });
  return d?.['spec'] as PodTemplate;
};

const secretVolume = (crt: string, key: string) => ({
  secretName,
  items: [
    { key: 'tls.crt', path: crt },
    { key: 'tls.key', path: key },
  ],
});

t.test(
  'install - a CSV with a validating webhook: serving cert Secret, mounted cert, CA bundle injected',
  async (t) => {
    const { client } = await installFunctionFor(t);
    const bundle = await smallBundle('node-maintenance-operator', csvName);
    const [hook] = (
      bundle.csv['spec'] as {
        webhookdefinitions: { generateName: string; deploymentName: string }[];
      }
    ).webhookdefinitions;
    if (hook === undefined) throw new Error('the bundle has no webhook');
    await installWebhookOperator(client, 'hooks', bundle);

    const secret = await client.get({
      apiVersion: 'v1',
      kind: 'Secret',
      namespace: 'hooks',
      name: secretName,
    });
    t.equal(secret?.['type'], 'kubernetes.io/tls');
    const caHash = secret?.metadata.annotations?.['olmcahash'];
    t.match(caHash, /^[0-9a-f]{64}$/, 'the Secret carries the CA hash');

    const configs = await client.list(
      { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration' },
      { labelSelector: `olm.webhook-description-generate-name=${hook.generateName}` },
    );
    t.equal(configs.items.length, 1, 'one configuration for the description');
    const config = configs.items[0];
    t.ok(config?.metadata.name?.startsWith(`${hook.generateName}-`), 'named from generateName');
    const webhook = (
      config?.['webhooks'] as {
        clientConfig: { caBundle: string; service: { name: string; port: number } };
      }[]
    )[0];
    t.equal(webhook?.clientConfig.service.name, service);
    t.equal(webhook?.clientConfig.service.port, 443, "the webhook calls the Service's port");
    t.ok((webhook?.clientConfig.caBundle ?? '').length > 100, 'CA bundle injected');

    const pod = (await deploymentOf(client, 'hooks')).template;
    t.equal(pod.metadata.annotations['olmcahash'], caHash, 'pods carry the same CA hash');
    t.same(
      pod.spec.volumes?.map((v) => [v.name, v.secret]),
      [
        ['apiservice-cert', secretVolume('apiserver.crt', 'apiserver.key')],
        ['webhook-cert', secretVolume('tls.crt', 'tls.key')],
      ],
      "both of upstream's certificate volumes",
    );
    for (const c of pod.spec.containers) {
      t.same(
        c.volumeMounts,
        [
          { name: 'apiservice-cert', mountPath: apiservicePath },
          { name: 'webhook-cert', mountPath: webhookPath },
        ],
        `container ${c.name} mounts both at upstream's paths`,
      );
    }
  },
);

t.test(
  "install - a webhook's Service targets the webhook's targetPort and carries upstream's labels",
  async (t) => {
    const { client } = await installFunctionFor(t);
    await installWebhookOperator(
      client,
      'hooks',
      await smallBundle('node-maintenance-operator', csvName),
    );
    const svc = await client.get({
      apiVersion: 'v1',
      kind: 'Service',
      namespace: 'hooks',
      name: service,
    });
    t.same(
      (svc?.['spec'] as { ports: unknown[] }).ports,
      [{ name: '443', port: 443, targetPort: 9443, protocol: 'TCP' }],
      'port 443 in front of the webhook server on 9443 (targetPort of the webhookdefinition)',
    );
    t.same(svc?.metadata.labels, { 'olm.managed': 'true' }, 'Service: olm.managed only');
    const secret = await client.get({
      apiVersion: 'v1',
      kind: 'Secret',
      namespace: 'hooks',
      name: secretName,
    });
    t.same(secret?.metadata.labels, { 'olm.managed': 'true' }, 'Secret: olm.managed only');
  },
);

t.test(
  'install - webhook RBAC as upstream: auth-delegator and auth-reader bindings, removed on uninstall',
  async (t) => {
    const { client } = await installFunctionFor(t);
    await installWebhookOperator(
      client,
      'hooks',
      await smallBundle('node-maintenance-operator', csvName),
    );
    const owner = {
      'olm.owner': csvName,
      'olm.owner.namespace': 'hooks',
      'olm.owner.kind': 'ClusterServiceVersion',
      'olm.managed': 'true',
    };
    const subjects = [{ kind: 'ServiceAccount', name: deploymentName, namespace: 'hooks' }];
    const delegatorRef = {
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      name: `${service}-system:auth-delegator`,
    };
    const readerRef = {
      apiVersion: rbac,
      kind: 'RoleBinding',
      namespace: 'kube-system',
      name: `${service}-auth-reader`,
    };
    t.match(await client.get(delegatorRef), {
      metadata: { labels: owner },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'system:auth-delegator',
      },
      subjects,
    });
    t.match(await client.get(readerRef), {
      metadata: { labels: owner },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: 'extension-apiserver-authentication-reader',
      },
      subjects,
    });
    for (const kind of ['Role', 'RoleBinding']) {
      const o = await client.get({ apiVersion: rbac, kind, namespace: 'hooks', name: secretName });
      t.same(
        o?.metadata.labels,
        { 'olm.managed': 'true' },
        `the Secret's ${kind}: no owner labels`,
      );
      t.match(o?.metadata.ownerReferences, [{ kind: 'ClusterServiceVersion', name: csvName }]);
    }
    // The rbac function lifts an AllNamespaces operator's owner-labelled Roles cluster-wide;
    // once it has lifted the CSV's own, the Secret's Role must not have followed.
    const ownedRoles = await client.list(
      { apiVersion: rbac, kind: 'Role', namespace: 'hooks' },
      { labelSelector: `olm.owner=${csvName},olm.owner.namespace=hooks` },
    );
    t.ok(ownedRoles.items.length > 0, "the CSV's permissions are Roles of its own");
    await waitFor("the CSV's Roles lifted to ClusterRoles of the same name", async () => {
      const lifted = await Promise.all(
        ownedRoles.items.map((r) =>
          client.get({ apiVersion: rbac, kind: 'ClusterRole', name: r.metadata.name ?? '' }),
        ),
      );
      return lifted.every((r) => r !== undefined) ? true : undefined;
    });
    for (const kind of ['ClusterRole', 'ClusterRoleBinding']) {
      t.equal(
        await client.get({ apiVersion: rbac, kind, name: secretName }),
        undefined,
        `no cluster-wide ${kind} for the Secret (upstream has none)`,
      );
    }

    await client.delete({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      namespace: 'hooks',
      name: csvName,
    });
    await waitFor('the bindings outside the namespace to go with the CSV', async () =>
      (await client.get(delegatorRef)) === undefined && (await client.get(readerRef)) === undefined
        ? true
        : undefined,
    );
    await waitFor('the Service, Secret, Role and RoleBinding to follow their owner', async () => {
      const left = await Promise.all([
        client.get({ apiVersion: 'v1', kind: 'Service', namespace: 'hooks', name: service }),
        client.get({ apiVersion: 'v1', kind: 'Secret', namespace: 'hooks', name: secretName }),
        client.get({ apiVersion: rbac, kind: 'Role', namespace: 'hooks', name: secretName }),
        client.get({ apiVersion: rbac, kind: 'RoleBinding', namespace: 'hooks', name: secretName }),
      ]);
      return left.every((o) => o === undefined) ? true : undefined;
    });
    t.pass('uninstalled');
  },
);

/** The bundle with its deployment already mounting a serving-cert volume at the webhook path. */
function withOwnCertMount(bundle: TestBundle): TestBundle {
  const out = structuredClone(bundle);
  const spec = out.csv['spec'] as {
    install: { spec: { deployments: { name: string; spec: PodTemplate }[] } };
  };
  for (const d of spec.install.spec.deployments) {
    const pod = d.spec.template.spec;
    pod.volumes = [...(pod.volumes ?? []), { name: 'cert', secret: { secretName: 'bundle-cert' } }];
    for (const c of pod.containers) {
      c.volumeMounts = [...(c.volumeMounts ?? []), { name: 'cert', mountPath: webhookPath }];
    }
  }
  return out;
}

t.test(
  "install - a bundle's own mount at the webhook path is replaced by webhook-cert, not duplicated",
  async (t) => {
    const { client } = await installFunctionFor(t);
    const bundle = withOwnCertMount(await smallBundle('node-maintenance-operator', csvName));
    await installWebhookOperator(client, 'hooks', bundle);
    const pod = (await deploymentOf(client, 'hooks')).template;
    for (const c of pod.spec.containers) {
      const paths = (c.volumeMounts ?? []).map((m) => m.mountPath);
      t.equal(new Set(paths).size, paths.length, `container ${c.name}: no mountPath twice`);
      t.same(
        (c.volumeMounts ?? []).filter(
          (m) => m.mountPath === webhookPath || m.mountPath === apiservicePath,
        ),
        [
          { name: 'webhook-cert', mountPath: webhookPath },
          { name: 'apiservice-cert', mountPath: apiservicePath },
        ],
        `container ${c.name}: webhook-cert in the bundle's mount's place, apiservice-cert added`,
      );
    }
    t.same(
      pod.spec.volumes?.map((v) => v.name),
      ['cert', 'apiservice-cert', 'webhook-cert'],
      "the bundle's volume stays (unmounted), as upstream",
    );
  },
);

t.test(
  'install - a webhook operator rolls its Deployment once: the first write carries the certificates',
  async (t) => {
    const { client } = await installFunctionFor(t);
    await installWebhookOperator(
      client,
      'hooks',
      await smallBundle('node-maintenance-operator', csvName),
    );
    const d = await client.get({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: 'hooks',
      name: deploymentName,
    });
    t.equal(d?.metadata.generation, 1, 'the Deployment was written once');
    const csv = await client.get({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      namespace: 'hooks',
      name: csvName,
    });
    const path = (
      (csv?.['status'] as { conditions: { phase: string; reason: string }[] }).conditions ?? []
    ).map((c) => `${c.phase}/${c.reason}`);
    t.notOk(path.includes('InstallReady/InstallWaiting'), `no second rollout: ${path.join(' → ')}`);
    t.same(
      path.filter((p) => p !== 'Installing/InstallWaiting').slice(-3),
      [
        'InstallReady/AllRequirementsMet',
        'Installing/InstallSucceeded',
        'Succeeded/InstallSucceeded',
      ],
      "upstream's phase path",
    );
  },
);
