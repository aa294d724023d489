import t from 'tap';
import {
  installFunctionFor,
  namespaceWithOperatorGroup,
  waitForCsvPhase,
} from '../harness/install.js';
import { createInstallPlan, smallBundle } from '../harness/install-plan.js';

interface PodTemplate {
  template: {
    metadata: { annotations: Record<string, string> };
    spec: {
      volumes?: { name: string; secret?: { secretName: string } }[];
      containers: { volumeMounts?: { name: string; mountPath: string }[] }[];
    };
  };
}

t.test(
  'install - a CSV with a validating webhook: serving cert Secret, mounted cert, CA bundle injected',
  async (t) => {
    const { client } = await installFunctionFor(t);
    await namespaceWithOperatorGroup(client, 'hooks', {}); // AllNamespaces
    const bundle = await smallBundle(
      'node-maintenance-operator',
      'node-maintenance-operator.v0.17.0',
    );
    const [hook] = (
      bundle.csv['spec'] as {
        webhookdefinitions: { generateName: string; deploymentName: string }[];
      }
    ).webhookdefinitions;
    if (hook === undefined) throw new Error('the bundle has no webhook');
    await createInstallPlan(client, {
      name: 'install-hooks',
      namespace: 'hooks',
      bundles: [bundle],
    });
    await waitForCsvPhase(
      client,
      'hooks',
      'node-maintenance-operator.v0.17.0',
      'Succeeded',
      undefined,
      30_000,
    );

    const service = `${hook.deploymentName.replaceAll('.', '-')}-service`;
    const secret = await client.get({
      apiVersion: 'v1',
      kind: 'Secret',
      namespace: 'hooks',
      name: `${service}-cert`,
    });
    t.equal(secret?.['type'], 'kubernetes.io/tls');
    const caHash = secret?.metadata.annotations?.['olmcahash'];
    t.match(caHash, /^[0-9a-f]{64}$/, 'the Secret carries the CA hash');
    t.ok(
      await client.get({ apiVersion: 'v1', kind: 'Service', namespace: 'hooks', name: service }),
      'Service',
    );

    const configs = await client.list(
      { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration' },
      { labelSelector: `olm.webhook-description-generate-name=${hook.generateName}` },
    );
    t.equal(configs.items.length, 1, 'one configuration for the description');
    const config = configs.items[0];
    t.ok(config?.metadata.name?.startsWith(`${hook.generateName}-`), 'named from generateName');
    const webhook = (
      config?.['webhooks'] as { clientConfig: { caBundle: string; service: { name: string } } }[]
    )[0];
    t.equal(webhook?.clientConfig.service.name, service);
    t.ok((webhook?.clientConfig.caBundle ?? '').length > 100, 'CA bundle injected');

    const deployment = await client.get({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: 'hooks',
      name: hook.deploymentName,
    });
    const pod = (deployment?.['spec'] as PodTemplate).template;
    t.equal(pod.metadata.annotations['olmcahash'], caHash, 'pods carry the same CA hash');
    t.match(pod.spec.volumes, [
      { name: 'webhook-cert', secret: { secretName: `${service}-cert` } },
    ]);
    t.ok(
      pod.spec.containers.every((c) =>
        c.volumeMounts?.some(
          (m) =>
            m.name === 'webhook-cert' && m.mountPath === '/tmp/k8s-webhook-server/serving-certs',
        ),
      ),
      "every container mounts the cert at upstream's path",
    );
  },
);
