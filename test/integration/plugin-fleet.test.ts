// `kubectl olmq fleet status` through the real kubectl over three devclusters, each running
// olmq with its package server: one kubeconfig with three contexts, a different etcd version
// on each (the channel head, one behind it waiting for approval, an older one), and a failure
// (a Subscription whose package requires an API nobody provides).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse, stringify } from 'yaml';
import { kubectlMissing } from '../harness/devcluster.js';
import {
  kubectlOlmq,
  pluginClusterFor,
  pluginPath,
  type PluginCluster,
} from '../harness/plugin.js';
import { waitFor } from '../harness/wait.js';

const missing = kubectlMissing();
if (missing !== undefined) throw new Error(missing);

interface Kubeconfig {
  clusters: { name: string; cluster: unknown }[];
  users: { name: string; user: unknown }[];
  contexts: { name: string; context: { cluster: string; user: string } }[];
}

const names = ['east', 'west', 'lab'];
const clusters: PluginCluster[] = [];
for (const name of names) clusters.push(await pluginClusterFor(t, { clusterId: name }));
const first = clusters[0] as PluginCluster;

// One kubeconfig, one context per devcluster, as a fleet owner's kubeconfig has.
const merged: Kubeconfig & Record<string, unknown> = {
  apiVersion: 'v1',
  kind: 'Config',
  clusters: [],
  users: [],
  contexts: [],
  'current-context': 'east',
};
clusters.forEach((c, i) => {
  const name = names[i] as string;
  const own = parse(readFileSync(c.fixture.kubeconfigPath, 'utf8')) as Kubeconfig;
  merged.clusters.push({ name, cluster: own.clusters[0]?.cluster });
  merged.users.push({ name: `${name}-admin`, user: own.users[0]?.user });
  merged.contexts.push({ name, context: { cluster: name, user: `${name}-admin` } });
});
const kubeconfig = join(first.fixture.dir, 'fleet-kubeconfig');
writeFileSync(kubeconfig, stringify(merged));

const bin = pluginPath(t);
const olmq = (...args: string[]) =>
  kubectlOlmq(first.fixture, bin, ['--kubeconfig', kubeconfig, ...args]);

interface FleetJson {
  clusters: {
    cluster: string;
    error: string | null;
    operators: {
      package: string;
      version: string;
      head: string;
      drift: string;
      failure: string;
      phase: string;
    }[];
  }[];
}

t.test("fleet - each cluster's version, drift from the channel head, failures", async (t) => {
  const install = async (context: string, ...args: string[]) => {
    const r = await olmq(
      '--context',
      context,
      'install',
      'etcd',
      '-n',
      'ops',
      '--create-operator-group',
      '--channel',
      'singlenamespace-alpha',
      ...args,
    );
    t.equal(r.code, 0, `install on ${context}: ${r.stderr}`);
  };
  for (const c of clusters)
    await c.client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ops' } });
  await Promise.all([
    install('east', '--wait', '--timeout', '120s'),
    install('west', '--version', '0.9.2', '--approval', 'Manual', '--wait', '--timeout', '120s'),
    install('lab', '--version', '0.9.0', '--approval', 'Manual', '--wait', '--timeout', '120s'),
  ]);
  const failing = await olmq(
    '--context',
    'lab',
    'install',
    'node-healthcheck-operator',
    '-n',
    'ops',
    '--channel',
    'alpha',
  );
  t.equal(failing.code, 0, failing.stderr);

  const fleet = await waitFor(
    'fleet status to show the failure on lab',
    async () => {
      const r = await olmq('fleet', 'status', '-o', 'json');
      const out = JSON.parse(r.stdout) as FleetJson;
      const lab = out.clusters.find((c) => c.cluster === 'lab');
      return lab?.operators.some((o) => o.failure.startsWith('ResolutionFailed')) ? out : undefined;
    },
    60_000,
    500,
  );
  const rows = fleet.clusters.flatMap((c) =>
    c.operators.map((o) => [
      c.cluster,
      o.package,
      o.version,
      o.drift,
      o.failure === '' ? '' : o.failure.split(':')[0],
    ]),
  );
  t.same(rows, [
    ['east', 'etcd', '0.9.4', 'up-to-date', ''],
    ['west', 'etcd', '0.9.2', 'behind', ''],
    ['lab', 'etcd', '0.9.0', 'behind', ''],
    ['lab', 'node-healthcheck-operator', '', 'unknown', 'ResolutionFailed'],
  ]);
  t.ok(fleet.clusters.every((c) => c.error === null));

  const text = await olmq('fleet', 'status');
  t.equal(text.code, 0, text.stderr);
  t.match(
    text.stdout,
    /^CLUSTER\s+NAMESPACE\s+PACKAGE\s+VERSION\s+CHANNEL\s+HEAD\s+DRIFT\s+STATUS\n/,
  );
  t.match(
    text.stdout,
    /\nwest\s+ops\s+etcd\s+0\.9\.2\s+singlenamespace-alpha\s+0\.9\.4\s+behind\s+Succeeded\n/,
  );
  t.match(text.stdout, /\nPACKAGE\s+EAST\s+WEST\s+LAB\n/);
  t.match(
    text.stdout,
    /\netcd\s+0\.9\.4\s+0\.9\.2\*\s+0\.9\.0\*\n/,
    'the per-cluster matrix marks drift',
  );

  const some = await olmq('fleet', 'status', '--contexts', 'east,lab', '-o', 'json');
  t.same(
    (JSON.parse(some.stdout) as FleetJson).clusters.map((c) => c.cluster),
    ['east', 'lab'],
  );
  const bad = await olmq('fleet', 'status', '--contexts', 'east,nowhere');
  t.equal(bad.code, 2);
  t.match(
    bad.stderr,
    /--contexts: context "nowhere" not found in the kubeconfig \(contexts: east, west, lab\)/,
  );
});
