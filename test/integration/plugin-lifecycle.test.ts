// `kubectl olmq` driven through the real kubectl (the plugin found on PATH) on the devcluster
// with olmq, its package server and the example catalog: install a chosen version with Manual
// approval, preview and approve the upgrade, list, uninstall.
import t from 'tap';
import type { KubeObject } from '../../shared/kube/client.js';
import { kubectl, kubectlMissing } from '../harness/devcluster.js';
import { kubectlOlmq, pluginClusterFor, pluginPath } from '../harness/plugin.js';
import { waitFor } from '../harness/wait.js';

const missing = kubectlMissing();
if (missing !== undefined) throw new Error(missing);

const { fixture, client } = await pluginClusterFor(t);
const bin = pluginPath(t);
const olmq = (...args: string[]) => kubectlOlmq(fixture, bin, args);
await kubectl(fixture, ['create', 'namespace', 'team']);

t.test(
  'plugin - install (Manual, a version) → Succeeded → preview → upgrade → uninstall',
  async (t) => {
    const installed = await olmq(
      'install',
      'etcd',
      '-n',
      'team',
      '--channel',
      'singlenamespace-alpha',
      '--version',
      '0.9.2',
      '--approval',
      'Manual',
      '--create-operator-group',
      '--wait',
      '--timeout',
      '120s',
    );
    t.equal(installed.code, 0, installed.stderr);
    t.match(installed.stderr, /operatorgroup "team" created/);
    t.match(installed.stderr, /installplan "[^"]+" approved/);
    t.match(
      installed.stderr,
      /waiting for subscription "etcd" to install etcdoperator\.v0\.9\.2/,
      'progress on stderr',
    );
    t.match(installed.stdout, /subscription\.operators\.coreos\.com\/etcd created/);

    const listed = await olmq('list', '-n', 'team', '-o', 'json');
    const rows = JSON.parse(listed.stdout) as {
      package: string;
      csv: string;
      phase: string;
      version: string;
    }[];
    t.same(
      rows.map((r) => [r.package, r.csv, r.version, r.phase]),
      [['etcd', 'etcdoperator.v0.9.2', '0.9.2', 'Succeeded']],
    );
    const table = await olmq('list', '-A');
    t.match(
      table.stdout,
      /^NAMESPACE\s+PACKAGE\s+SUBSCRIPTION\s+INSTALLED CSV\s+VERSION\s+PHASE\s+CHANNEL\s+CATALOG\s+AGE\n/,
    );
    t.match(
      table.stdout,
      /\nteam\s+etcd\s+etcd\s+etcdoperator\.v0\.9\.2\s+0\.9\.2\s+Succeeded\s+singlenamespace-alpha\s+olm\/community\s/,
    );

    // The next version waits for approval: preview names it, why says how to approve it.
    const preview = await waitFor(
      'the preview to offer the upgrade',
      async () => {
        const r = await olmq('preview', 'etcd', '-n', 'team', '-o', 'json');
        const out = JSON.parse(r.stdout) as {
          bundles: { name: string; action: string; replaces: string | null }[];
        };
        return out.bundles.find((b) => b.action === 'upgrade');
      },
      30_000,
    );
    t.same([preview.name, preview.replaces], ['etcdoperator.v0.9.4', 'etcdoperator.v0.9.2']);
    const channelPreview = await olmq(
      'preview',
      'etcd',
      '-n',
      'team',
      '--channel',
      'clusterwide-alpha',
    );
    t.match(channelPreview.stdout, /switching channel singlenamespace-alpha -> clusterwide-alpha/);

    const upgraded = await olmq('upgrade', 'etcd', '-n', 'team', '--wait', '--timeout', '120s');
    t.equal(upgraded.code, 0, upgraded.stderr);
    t.match(upgraded.stdout, /installplan "[^"]+" approved: etcdoperator\.v0\.9\.4/);
    const after = JSON.parse((await olmq('list', '-n', 'team', '-o', 'json')).stdout) as {
      csv: string;
      phase: string;
    }[];
    t.same(
      after.map((r) => [r.csv, r.phase]),
      [['etcdoperator.v0.9.4', 'Succeeded']],
    );
    const healthy = await olmq('why', 'etcd', '-n', 'team');
    t.match(healthy.stdout, /Subscription team\/etcd: Installed/);

    const removed = await olmq('uninstall', 'etcd', '-n', 'team', '--delete-all');
    t.equal(removed.code, 0, removed.stderr);
    t.match(removed.stdout, /subscription "etcd" deleted/);
    t.match(
      removed.stdout,
      /customresourcedefinition "etcdclusters\.etcd\.database\.coreos\.com" deleted/,
    );
    t.match(removed.stdout, /clusterserviceversion "etcdoperator\.v0\.9\.4" deleted/);
    t.match(removed.stdout, /operatorgroup "team" deleted/);
    const crd = await client.get<KubeObject>({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name: 'etcdclusters.etcd.database.coreos.com',
    });
    t.equal(crd, undefined, 'the owned CRD is gone');
    const empty = await olmq('list', '-n', 'team');
    t.equal(empty.stdout, '');
    t.match(empty.stderr, /No resources found in team namespace\./);
  },
);
