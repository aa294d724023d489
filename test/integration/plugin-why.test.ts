// `kubectl olmq why` through the real kubectl names the cause of a Subscription stuck before
// anything installs, each situation built for real on the devcluster: a catalog whose registry
// is dead, a package requiring an API nobody provides, a plan waiting for manual approval
// (plugin-why-install.test.ts: a failed plan step, a Deployment never available).
import t from 'tap';
import { kubectl, kubectlMissing } from '../harness/devcluster.js';
import { kubectlOlmq, pluginClusterFor, pluginPath } from '../harness/plugin.js';
import { namespaceWithGroup, subscribe, whyNames } from '../harness/plugin-why.js';

const missing = kubectlMissing();
if (missing !== undefined) throw new Error(missing);

const { fixture, client } = await pluginClusterFor(t);
const bin = pluginPath(t);
const olmq = (...args: string[]) => kubectlOlmq(fixture, bin, args);

t.test('why - an unhealthy catalog: its registry does not answer', async (t) => {
  await namespaceWithGroup(fixture, client, 'why-catalog');
  await client.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    metadata: { name: 'dead', namespace: 'why-catalog' },
    spec: { sourceType: 'grpc', address: '127.0.0.1:1' },
  });
  await subscribe(client, 'why-catalog', {
    name: 'etcd',
    source: 'dead',
    sourceNamespace: 'why-catalog',
    channel: 'singlenamespace-alpha',
  });
  const { json, text } = await whyNames(olmq, 'why-catalog', 'etcd', 'CatalogUnhealthy');
  t.match(
    json.finding?.message,
    /catalog why-catalog\/dead is unhealthy .*its registry 127\.0\.0\.1:1 does not answer/,
  );
  t.match(json.finding?.fix[0], /kubectl get catalogsource dead -n why-catalog -o yaml/);
  t.match(text, /=>\s+Catalog\s+why-catalog\/dead\s+FAILED/, 'the failing link is marked');
  t.match(text, /Cause: CatalogUnhealthy: /);
  t.match(
    text,
    /\n\s+InstallPlan\s+<none>\s+NOT REACHED\s+no plan yet\n/,
    'links after the cause are not reached',
  );
  t.notMatch(text, /<none>\s+Subscription/, 'no marker is a blank cell');
});

t.test(
  'why - unsatisfiable constraints: the package requires an API nobody provides',
  async (t) => {
    await namespaceWithGroup(fixture, client, 'why-unsat');
    // node-healthcheck-operator v0.1.1 (channel alpha) requires PoisonPillRemediation, which no
    // package of the catalog provides.
    await subscribe(client, 'why-unsat', {
      name: 'node-healthcheck-operator',
      source: 'community',
      sourceNamespace: 'olm',
      channel: 'alpha',
    });
    const { json, text } = await whyNames(
      olmq,
      'why-unsat',
      'node-healthcheck-operator',
      'ResolutionFailed',
    );
    t.match(json.finding?.message, /constraints cannot be satisfied: .*PoisonPillRemediation/);
    t.match(text, /=>\s+Resolution\s+node-healthcheck-operator\s+FAILED/);
    t.match(text, /Fix:\s+see what the catalogs offer: kubectl olmq list-available -n why-unsat/);
  },
);

t.test('why - a plan waiting for manual approval', async (t) => {
  const installed = await olmq(
    'install',
    'etcd',
    '-n',
    'why-approval',
    '--approval',
    'Manual',
    '--create-operator-group',
  );
  t.equal(installed.code, 1, 'the namespace does not exist yet');
  await kubectl(fixture, ['create', 'namespace', 'why-approval']);
  const again = await olmq(
    'install',
    'etcd',
    '-n',
    'why-approval',
    '--approval',
    'Manual',
    '--create-operator-group',
  );
  t.equal(again.code, 0, again.stderr);
  const { json, text } = await whyNames(olmq, 'why-approval', 'etcd', 'ApprovalRequired');
  t.match(
    json.finding?.message,
    /InstallPlan install-\w+ waits for manual approval to install etcdoperator\.v0\.9\.4/,
  );
  t.equal(json.finding?.fix[0], 'approve with: kubectl olmq upgrade etcd -n why-approval');
  t.match(
    json.finding?.fix[1],
    /^or: kubectl patch installplan install-\w+ -n why-approval --type merge -p '\{"spec":\{"approved":true\}\}'$/,
  );
  t.match(text, /=>\s+InstallPlan\s+install-\w+\s+FAILED\s+RequiresApproval/);
});
