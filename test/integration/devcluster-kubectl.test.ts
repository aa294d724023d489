// The real kubectl against the devcluster: what users and OLM docs do with it.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import {
  kubectl,
  kubectlMissing,
  startCluster,
  type ClusterFixture,
} from '../harness/devcluster.js';
import { waitFor } from '../harness/wait.js';

const crdDir = join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'devcluster');
const missing = kubectlMissing();
if (missing !== undefined) {
  t.fail(`${missing}; install kubectl (npm test checks for it up front)`);
} else {
  let fixture: ClusterFixture;
  t.before(async () => {
    // kubectl picks the client closest to /version: DEVCLUSTER_KUBE_VERSION runs the suite with another one.
    fixture = await startCluster({
      kubernetesVersion: process.env['DEVCLUSTER_KUBE_VERSION'] ?? 'v1.30.6',
    });
  });
  t.teardown(async () => {
    await fixture.close();
  });

  const run = async (args: string[], input?: string): Promise<string> => {
    const result = await kubectl(fixture, args, input);
    if (result.code !== 0)
      throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
    return result.stdout;
  };

  const widget = (name: string, size: string, extra = ''): string =>
    `apiVersion: example.olmq.io/v1\nkind: Widget\nmetadata:\n  name: ${name}\n  namespace: default\n  labels:\n    tier: ${size}\nspec:\n  size: ${size}\n${extra}`;

  void t.test('kubectl - apply -f a CRD directory and wait for Established', async (t) => {
    const out = await run(['apply', '-f', crdDir]);
    t.match(out, /customresourcedefinition.apiextensions.k8s.io\/widgets.example.olmq.io created/);
    const waited = await run([
      'wait',
      '--for=condition=Established',
      'crd/widgets.example.olmq.io',
      '--timeout=20s',
    ]);
    t.match(waited, /condition met/);
  });

  void t.test(
    'kubectl - api-resources lists CRD kinds and get olm -A finds them by category',
    async (t) => {
      const resources = await run(['api-resources']);
      t.match(resources, /widgets\s+wd\s+example.olmq.io\/v1\s+true\s+Widget/);
      await run(['apply', '-f', '-'], widget('cat', 'small'));
      const out = await run(['get', 'olm', '-A']);
      t.match(out, /NAMESPACE\s+NAME\s+SIZE\s+READY\s+AGE/);
      t.match(out, /default\s+cat\s+small/);
    },
  );

  void t.test(
    'kubectl - get prints tables, yaml, json, and filters by label and field selectors',
    async (t) => {
      await run(['create', 'configmap', 'alpha', '--from-literal=a=1', '-n', 'default']);
      await run([
        'create',
        'configmap',
        'beta',
        '--from-literal=a=1',
        '--from-literal=b=2',
        '-n',
        'default',
      ]);
      await run(['label', 'configmap', 'beta', 'team=blue', '-n', 'default']);
      const table = await run(['get', 'cm', '-n', 'default']);
      t.match(table, /NAME\s+DATA\s+AGE/);
      t.match(table, /beta\s+2\s+/);
      const yaml = await run(['get', 'cm', 'alpha', '-n', 'default', '-o', 'yaml']);
      t.match(yaml, /kind: ConfigMap/);
      const json = JSON.parse(await run(['get', 'cm', 'beta', '-n', 'default', '-o', 'json'])) as {
        data: Record<string, string>;
      };
      t.same(json.data, { a: '1', b: '2' });
      const labelled = await run(['get', 'cm', '-n', 'default', '-l', 'team=blue', '-o', 'name']);
      t.equal(labelled.trim(), 'configmap/beta');
      const byField = await run([
        'get',
        'cm',
        '-n',
        'default',
        '--field-selector',
        'metadata.name=alpha',
        '-o',
        'name',
      ]);
      t.equal(byField.trim(), 'configmap/alpha');
    },
  );

  void t.test('kubectl - get -w streams changes', async (t) => {
    const child = spawn(
      'kubectl',
      ['get', 'cm', '-n', 'default', '-w', '--output-watch-events', '-l', 'watched=yes'],
      {
        env: {
          ...process.env,
          KUBECONFIG: fixture.kubeconfigPath,
          KUBECACHEDIR: join(fixture.dir, 'cache'),
          HOME: fixture.dir,
        },
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    t.teardown(() => void child.kill());
    await run(['create', 'configmap', 'watched-1', '-n', 'default']);
    await run(['label', 'configmap', 'watched-1', 'watched=yes', '-n', 'default']);
    await waitFor('ADDED in kubectl get -w', () =>
      /ADDED\s+watched-1/.test(output) ? true : undefined,
    );
    await run(['delete', 'configmap', 'watched-1', '-n', 'default']);
    await waitFor('DELETED in kubectl get -w', () =>
      /DELETED\s+watched-1/.test(output) ? true : undefined,
    );
    t.pass('watch events seen');
  });

  void t.test('kubectl - describe shows the object and its events', async (t) => {
    const uid = (
      await run(['get', 'cm', 'alpha', '-n', 'default', '-o', 'jsonpath={.metadata.uid}'])
    ).trim();
    await run(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'alpha.1', namespace: 'default' },
        involvedObject: {
          kind: 'ConfigMap',
          name: 'alpha',
          namespace: 'default',
          uid,
          apiVersion: 'v1',
        },
        reason: 'Tested',
        message: 'described in a test',
        type: 'Normal',
        source: { component: 'test' },
        count: 1,
        firstTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        lastTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      }),
    );
    const out = await run(['describe', 'cm', 'alpha', '-n', 'default']);
    t.match(out, /Name:\s+alpha/);
    t.match(out, /Tested\s+.*described in a test/);
  });

  void t.test('kubectl - patch with merge, json and strategic patches', async (t) => {
    await run(['create', 'deployment', 'patched', '--image=nginx:1.25', '-n', 'default']);
    await run([
      'patch',
      'deployment',
      'patched',
      '-n',
      'default',
      '--type=merge',
      '-p',
      '{"metadata":{"labels":{"merged":"yes"}}}',
    ]);
    await run([
      'patch',
      'deployment',
      'patched',
      '-n',
      'default',
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/replicas","value":2}]',
    ]);
    await run([
      'patch',
      'deployment',
      'patched',
      '-n',
      'default',
      '-p',
      '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","env":[{"name":"A","value":"1"}]}]}}}}',
    ]);
    const d = JSON.parse(
      await run(['get', 'deployment', 'patched', '-n', 'default', '-o', 'json']),
    ) as {
      metadata: { labels: Record<string, string> };
      spec: {
        replicas: number;
        template: { spec: { containers: { name: string; image: string; env: unknown }[] } };
      };
    };
    t.equal(d.metadata.labels['merged'], 'yes');
    t.equal(d.spec.replicas, 2);
    t.equal(
      d.spec.template.spec.containers.length,
      1,
      'strategic merge keeps one container, merged by name',
    );
    t.equal(d.spec.template.spec.containers[0]?.image, 'nginx:1.25');
    t.same(d.spec.template.spec.containers[0]?.env, [{ name: 'A', value: '1' }]);
  });

  void t.test('kubectl - apply twice reports the second as unchanged', async (t) => {
    const manifest = widget('twice', 'medium');
    t.match(await run(['apply', '-f', '-'], manifest), /widget.example.olmq.io\/twice created/);
    t.match(await run(['apply', '-f', '-'], manifest), /widget.example.olmq.io\/twice unchanged/);
  });

  void t.test('kubectl - apply --server-side records the kubectl field manager', async (t) => {
    const out = await run(['apply', '--server-side', '-f', '-'], widget('ssa', 'large'));
    t.match(out, /serverside-applied/);
    const managers = await run([
      'get',
      'widget',
      'ssa',
      '-n',
      'default',
      '--show-managed-fields',
      '-o',
      'jsonpath={.metadata.managedFields[*].manager}',
    ]);
    t.match(managers, /kubectl/);
    const again = await run(['apply', '--server-side', '-f', '-'], widget('ssa', 'medium'));
    t.match(again, /serverside-applied/);
    t.equal(
      (await run(['get', 'widget', 'ssa', '-n', 'default', '-o', 'jsonpath={.spec.size}'])).trim(),
      'medium',
    );
  });

  void t.test(
    'kubectl - delete cascades from a deployment to its replica sets and pods',
    async (t) => {
      await run([
        'create',
        'deployment',
        'cascade',
        '--image=nginx:1.25',
        '--replicas=2',
        '-n',
        'default',
      ]);
      await run(['rollout', 'status', 'deployment/cascade', '-n', 'default', '--timeout=20s']);
      const pods = await run(['get', 'pods', '-n', 'default', '-l', 'app=cascade', '-o', 'name']);
      t.equal(pods.trim().split('\n').length, 2);
      const described = await run(['describe', 'deployment', 'cascade', '-n', 'default']);
      t.match(described, /ScalingReplicaSet\s+.*Scaled up replica set cascade-\w+ to 2/);
      await run(['delete', 'deployment', 'cascade', '-n', 'default', '--cascade=foreground']);
      await waitFor('pods of cascade to be gone', async () => {
        const out = await run([
          'get',
          'pods,rs',
          '-n',
          'default',
          '-l',
          'app=cascade',
          '-o',
          'name',
        ]);
        return out.trim() === '' ? true : undefined;
      });
      t.pass('dependents deleted');
    },
  );

  void t.test('kubectl - wait on a custom resource condition', async (t) => {
    await run(['apply', '-f', '-'], widget('waited', 'small'));
    const waiting = kubectl(fixture, [
      'wait',
      '--for=condition=Ready',
      'widget/waited',
      '-n',
      'default',
      '--timeout=20s',
    ]);
    await run([
      'patch',
      'widget',
      'waited',
      '-n',
      'default',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Done","message":"ok"}]}}',
    ]);
    const result = await waiting;
    t.equal(result.code, 0, result.stderr);
    t.match(result.stdout, /condition met/);
  });

  void t.test('kubectl - auth can-i as a service account follows RBAC', async (t) => {
    await run(['create', 'namespace', 'tenant']);
    await run(['create', 'serviceaccount', 'robot', '-n', 'tenant']);
    const before = await kubectl(fixture, [
      'auth',
      'can-i',
      'list',
      'pods',
      '-n',
      'tenant',
      '--as=system:serviceaccount:tenant:robot',
    ]);
    t.equal(before.stdout.trim(), 'no');
    await run([
      'create',
      'rolebinding',
      'robot-view',
      '--clusterrole=view',
      '--serviceaccount=tenant:robot',
      '-n',
      'tenant',
    ]);
    const after = await kubectl(fixture, [
      'auth',
      'can-i',
      'list',
      'pods',
      '-n',
      'tenant',
      '--as=system:serviceaccount:tenant:robot',
    ]);
    t.equal(after.stdout.trim(), 'yes');
  });

  void t.test('kubectl - --as impersonation is denied with kube wording', async (t) => {
    const result = await kubectl(fixture, [
      'create',
      'clusterrole',
      'nope',
      '--verb=get',
      '--resource=pods',
      '--as=system:serviceaccount:tenant:robot',
    ]);
    t.not(result.code, 0);
    t.match(
      result.stderr,
      'User "system:serviceaccount:tenant:robot" cannot create resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope',
    );
  });

  void t.test('kubectl - explain describes a CRD field', async (t) => {
    const out = await run(['explain', 'widgets.spec.size']);
    t.match(out, /FIELD:\s+size <string>/);
    t.match(out, /Size of the widget/);
  });

  void t.test('kubectl - apply with validation rejects unknown fields of a CRD', async (t) => {
    const result = await kubectl(
      fixture,
      ['apply', '-f', '-'],
      widget('strict', 'small', '  bogus: 1\n'),
    );
    t.not(result.code, 0);
    t.match(result.stderr, /unknown field "spec.bogus"/);
    t.ok(readFileSync(fixture.kubeconfigPath, 'utf8').includes('olmq-devcluster'));
  });
}
