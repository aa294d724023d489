// End to end, as a user runs it: `olmq up` (devcluster, nats-server, watcher, every function,
// package server), a catalog served by `olmq registry serve` from the real small/ catalog, and
// kubectl. A Subscription becomes an InstallPlan, a Succeeded CSV and an available Deployment,
// with Automatic and with Manual approval; the packages show as PackageManifests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { kubectlAt, kubectlMissing } from '../harness/devcluster.js';
import { startOlmq } from '../harness/cli.js';
import { smallCatalog } from '../harness/repo.js';
import { waitFor } from '../harness/wait.js';

const missing = kubectlMissing();
if (missing !== undefined) throw new Error(missing);

t.test('a Subscription installs a real operator, Automatic and Manual', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'olmq-e2e-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfigPath = join(dir, 'kubeconfig');
  await startOlmq(
    t,
    [
      'up',
      '--data-dir',
      join(dir, 'data'),
      '--kubeconfig-out',
      kubeconfigPath,
      '--metrics-port',
      '0',
      '--catalog',
      'none',
    ],
    /olmq is ready/,
  );
  const registry = await startOlmq(
    t,
    ['registry', 'serve', '--fbc', smallCatalog, '--port', '0', '--host', '127.0.0.1'],
    /serving .*?:(\d+)/,
  );
  const port = registry.match[1] ?? '';
  const kubectl = kubectlAt(kubeconfigPath, dir);

  await kubectl(
    ['apply', '-f', '-'],
    `
apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata: {name: community, namespace: olm}
spec: {sourceType: grpc, address: "127.0.0.1:${port}", displayName: Community Operators, publisher: olmq tests}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: og, namespace: team-a}
spec: {targetNamespaces: [team-a]}
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: etcd, namespace: team-a}
spec: {name: etcd, channel: singlenamespace-alpha, source: community, sourceNamespace: olm}
`,
  );
  await waitFor(
    'the CatalogSource READY',
    async () =>
      (await kubectl([
        'get',
        'catsrc',
        'community',
        '-n',
        'olm',
        '-o',
        'jsonpath={.status.connectionState.lastObservedState}',
      ])) === 'READY',
    60_000,
    200,
  );
  const packages = await waitFor(
    'PackageManifests of the catalog',
    async () => {
      const out = await kubectl(['get', 'packagemanifests', '-n', 'team-a']);
      return out.includes('etcd') ? out : undefined;
    },
    60_000,
    200,
  );
  t.equal(
    await kubectl(['get', 'catsrc', '-A', '-o', 'jsonpath={.items[*].metadata.name}']),
    'community',
    'with --catalog none, olmq up registers no catalog of its own',
  );
  for (const pkg of ['etcd', 'prometheus', 'hawtio-operator', 'node-healthcheck-operator']) {
    t.match(packages, new RegExp(`\\n${pkg}\\s+Community Operators\\s`), `${pkg} is listed`);
  }

  await waitFor(
    'etcdoperator.v0.9.4 Succeeded',
    async () =>
      (await kubectl([
        'get',
        'csv',
        'etcdoperator.v0.9.4',
        '-n',
        'team-a',
        '-o',
        'jsonpath={.status.phase}',
      ]).catch(() => '')) === 'Succeeded',
    120_000,
    250,
  );
  t.equal(
    await kubectl([
      'get',
      'deployment',
      'etcd-operator',
      '-n',
      'team-a',
      '-o',
      'jsonpath={.status.availableReplicas}',
    ]),
    '1',
    'the operator Deployment is available',
  );
  t.match(
    await kubectl(['get', 'csv', 'etcdoperator.v0.9.4', '-n', 'team-a']),
    /\netcdoperator\.v0\.9\.4\s.*\s0\.9\.4\s+etcdoperator\.v0\.9\.2\s+Succeeded/,
    "REPLACES shows the channel's replaces edge on a fresh install, as upstream",
  );
  t.equal(
    await kubectl([
      'get',
      'sub',
      'etcd',
      '-n',
      'team-a',
      '-o',
      'jsonpath={.status.state}/{.status.installedCSV}',
    ]),
    'AtLatestKnown/etcdoperator.v0.9.4',
  );
  const ipName = await kubectl([
    'get',
    'sub',
    'etcd',
    '-n',
    'team-a',
    '-o',
    'jsonpath={.status.installPlanRef.name}',
  ]);
  t.equal(
    await kubectl(['get', 'ip', ipName, '-n', 'team-a', '-o', 'jsonpath={.status.phase}']),
    'Complete',
  );

  // Manual approval: the plan waits until a person approves it.
  await kubectl(
    ['apply', '-f', '-'],
    `
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: og, namespace: team-b}
spec: {targetNamespaces: [team-b]}
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: etcd, namespace: team-b}
spec: {name: etcd, channel: singlenamespace-alpha, source: community, sourceNamespace: olm, installPlanApproval: Manual, startingCSV: etcdoperator.v0.9.2}
`,
  );
  const manual = await waitFor(
    'a plan that requires approval',
    async () => {
      const name = await kubectl([
        'get',
        'sub',
        'etcd',
        '-n',
        'team-b',
        '-o',
        'jsonpath={.status.installPlanRef.name}',
      ]);
      if (name === '') return undefined;
      const phase = await kubectl([
        'get',
        'ip',
        name,
        '-n',
        'team-b',
        '-o',
        'jsonpath={.status.phase}',
      ]);
      return phase === 'RequiresApproval' ? name : undefined;
    },
    60_000,
    200,
  );
  t.equal(
    await kubectl(['get', 'csv', '-n', 'team-b', '-o', 'name']),
    '',
    'nothing is installed before approval',
  );
  await kubectl([
    'patch',
    'ip',
    manual,
    '-n',
    'team-b',
    '--type',
    'merge',
    '-p',
    '{"spec":{"approved":true}}',
  ]);
  await waitFor(
    'etcdoperator.v0.9.2 Succeeded after approval',
    async () =>
      (await kubectl([
        'get',
        'csv',
        'etcdoperator.v0.9.2',
        '-n',
        'team-b',
        '-o',
        'jsonpath={.status.phase}',
      ]).catch(() => '')) === 'Succeeded',
    120_000,
    250,
  );
  t.pass('the approved plan installed the startingCSV');

  // Installed, the Subscription upgrades along the replaces chain: a new plan, approved again.
  const upgrade = await waitFor(
    'an upgrade plan for etcdoperator.v0.9.4',
    async () => {
      const name = await kubectl([
        'get',
        'sub',
        'etcd',
        '-n',
        'team-b',
        '-o',
        'jsonpath={.status.installPlanRef.name}',
      ]);
      if (name === manual) return undefined;
      const csvs = await kubectl([
        'get',
        'ip',
        name,
        '-n',
        'team-b',
        '-o',
        'jsonpath={.spec.clusterServiceVersionNames}',
      ]);
      return csvs.includes('etcdoperator.v0.9.4') ? name : undefined;
    },
    60_000,
    200,
  );
  await kubectl([
    'patch',
    'ip',
    upgrade,
    '-n',
    'team-b',
    '--type',
    'merge',
    '-p',
    '{"spec":{"approved":true}}',
  ]);
  await waitFor(
    'the upgrade done: v0.9.4 Succeeded and v0.9.2 gone',
    async () =>
      (
        await kubectl([
          'get',
          'csv',
          '-n',
          'team-b',
          '-o',
          'jsonpath={range .items[*]}{.metadata.name}={.status.phase} {end}',
        ])
      ).trim() === 'etcdoperator.v0.9.4=Succeeded',
    120_000,
    250,
  );
  t.equal(
    await kubectl([
      'get',
      'sub',
      'etcd',
      '-n',
      'team-b',
      '-o',
      'jsonpath={.status.state}/{.status.installedCSV}',
    ]),
    'AtLatestKnown/etcdoperator.v0.9.4',
  );
});
