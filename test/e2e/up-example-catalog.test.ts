// `npm start` as a newcomer meets it: `olmq up` with no catalog of their own lists operators at
// once (CatalogSource olmq-example over the repository's catalogs/example), a Subscription to
// it installs, and after a restart on the same data dir the CatalogSource follows the new port.
// A bad --catalog is refused before anything starts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { runOlmq, startOlmq } from '../harness/cli.js';
import { kubectlAt, kubectlMissing } from '../harness/devcluster.js';
import { waitFor } from '../harness/wait.js';

const missing = kubectlMissing();
if (missing !== undefined) throw new Error(missing);

t.test('olmq up serves its example catalog: packagemanifests at once, installs', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'olmq-up-catalog-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const args = [
    'up',
    '--data-dir',
    join(dir, 'data'),
    '--kubeconfig-out',
    kubeconfigPath,
    '--metrics-port',
    '0',
  ];
  const kubectl = kubectlAt(kubeconfigPath, dir);
  const catalogAddress = () =>
    kubectl(['get', 'catsrc', 'olmq-example', '-n', 'olm', '-o', 'jsonpath={.spec.address}']);

  const first = await startOlmq(t, args, /catalog: +olm\/olmq-example, 6 packages served at (\S+)/);
  t.equal(await catalogAddress(), first.match[1], 'the CatalogSource points at the served catalog');
  const packages = await waitFor(
    'PackageManifests of olmq-example',
    async () => {
      const out = await kubectl(['get', 'packagemanifests', '-n', 'olm']);
      return out.split('\n').length >= 8 ? out : undefined;
    },
    60_000,
    200,
  );
  for (const pkg of [
    'etcd',
    'hawtio-operator',
    'node-healthcheck-operator',
    'node-maintenance-operator',
    'prometheus',
    'self-node-remediation',
  ])
    t.match(packages, new RegExp(`\\n${pkg}\\s+olmq example operators\\s`), `${pkg} is listed`);

  await kubectl(
    ['apply', '-f', '-'],
    `
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
spec: {name: etcd, channel: singlenamespace-alpha, source: olmq-example, sourceNamespace: olm}
`,
  );
  const csvPhase = () =>
    kubectl([
      'get',
      'csv',
      'etcdoperator.v0.9.4',
      '-n',
      'team-a',
      '-o',
      'jsonpath={.status.phase}',
    ]).catch(() => '');
  await waitFor(
    'etcdoperator.v0.9.4 Succeeded',
    async () => (await csvPhase()) === 'Succeeded',
    120_000,
    250,
  );

  // Restart on the same data dir: the kept CatalogSource is pointed at the new server.
  first.child.kill('SIGTERM');
  await new Promise<void>((resolve) =>
    first.child.exitCode !== null ? resolve() : first.child.once('exit', () => resolve()),
  );
  const second = await startOlmq(
    t,
    args,
    /catalog: +olm\/olmq-example, 6 packages served at (\S+)/,
  );
  t.equal(await catalogAddress(), second.match[1], 'the CatalogSource follows the new address');
  await waitFor(
    'the CatalogSource READY again',
    async () =>
      (await kubectl([
        'get',
        'catsrc',
        'olmq-example',
        '-n',
        'olm',
        '-o',
        'jsonpath={.status.connectionState.lastObservedState}/{.status.connectionState.address}',
      ])) === `READY/${second.match[1]}`,
    60_000,
    200,
  );
  t.equal(await csvPhase(), 'Succeeded', 'the installed operator is untouched');
});

t.test('a bad --catalog exits 2 before anything starts', async (t) => {
  const bad = await runOlmq(['up', '--catalog', '/nonexistent/catalog', '--metrics-port', '0']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /^olmq up: --catalog \/nonexistent\/catalog: cannot read catalog/m);
  t.notMatch(bad.stdout, /olmq is ready/, 'nothing started');
});
