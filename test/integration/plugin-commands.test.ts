// `kubectl olmq` driven through the real kubectl (the plugin found on PATH) on the devcluster
// with olmq, its package server and the example catalog: browsing packages, managing catalogs,
// and the exit codes and messages of bad input.
import t from 'tap';
import { kubectl, kubectlMissing } from '../harness/devcluster.js';
import { kubectlOlmq, pluginClusterFor, pluginPath } from '../harness/plugin.js';

const missing = kubectlMissing();
if (missing !== undefined) throw new Error(missing);

const { fixture } = await pluginClusterFor(t);
const bin = pluginPath(t);
const olmq = (...args: string[]) => kubectlOlmq(fixture, bin, args);
await kubectl(fixture, ['create', 'namespace', 'team']);

t.test('plugin - list-available and describe read the PackageManifests', async (t) => {
  const available = await olmq('list-available', '-n', 'team');
  t.equal(available.code, 0, available.stderr);
  const lines = available.stdout.trim().split('\n');
  t.match(lines[0], /^NAME\s+CATALOG\s+DEFAULT CHANNEL\s+LATEST\s+CHANNELS\s+PROVIDER$/);
  t.match(available.stdout, /\netcd\s+Community Operators\s+singlenamespace-alpha\s+0\.9\.4\s/);
  const described = await olmq('describe', 'etcd', '-n', 'team');
  t.equal(described.code, 0, described.stderr);
  t.match(described.stdout, /Default channel:\s+singlenamespace-alpha/);
  t.match(
    described.stdout,
    /singlenamespace-alpha\s+etcdoperator\.v0\.9\.4\s+0\.9\.4\s+0\.9\.4, 0\.9\.2, 0\.9\.0/,
  );
  const json = await olmq('list-available', 'etcd', '-n', 'team', '-o', 'json');
  t.same(
    (JSON.parse(json.stdout) as { name: string; latest: string }[]).map((p) => [p.name, p.latest]),
    [['etcd', '0.9.4']],
  );
});

t.test(
  'plugin - bad input: exit 2 naming the flag; a missing object: exit 1 as kubectl says it',
  async (t) => {
    const approval = await olmq('install', 'etcd', '-n', 'team', '--approval', 'Sometimes');
    t.equal(approval.code, 2);
    t.match(approval.stderr, /--approval: "Sometimes" is not one of Automatic, Manual/);
    const unknown = await olmq('install', 'etcd', '--colour');
    t.equal(unknown.code, 2);
    t.match(unknown.stderr, /unknown flag: --colour/);
    const version = await olmq('install', 'etcd', '-n', 'team', '--version', '9.9.9');
    t.equal(version.code, 2);
    t.match(
      version.stderr,
      /--version: channel "singlenamespace-alpha" of package "etcd" has no version "9\.9\.9"/,
    );
    const noPackage = await olmq('install', 'nosuch', '-n', 'team');
    t.equal(noPackage.code, 1);
    t.match(noPackage.stderr, /package "nosuch" not found/);
    const noSub = await olmq('why', 'nosuch', '-n', 'team');
    t.equal(noSub.code, 1);
    t.match(
      noSub.stderr,
      /subscriptions\.operators\.coreos\.com "nosuch" not found in namespace "team"/,
    );
    const noCommand = await olmq('frobnicate');
    t.equal(noCommand.code, 2);
    t.match(noCommand.stderr, /unknown command "frobnicate"/);
  },
);

t.test('plugin - catalog add, list, remove', async (t) => {
  const added = await olmq(
    'catalog',
    'add',
    'extra',
    'quay.io/example/catalog:latest',
    '-n',
    'team',
    '--display-name',
    'Extra',
  );
  t.equal(added.code, 0, added.stderr);
  t.match(added.stdout, /catalogsource\.operators\.coreos\.com\/extra created/);
  const listed = await olmq('catalog', 'list', '-A');
  t.match(
    listed.stdout,
    /^NAMESPACE\s+NAME\s+DISPLAY\s+TYPE\s+ADDRESS\/IMAGE\s+PUBLISHER\s+STATE\s+AGE\n/,
  );
  t.match(
    listed.stdout,
    /\nolm\s+community\s+Community Operators\s+grpc\s+127\.0\.0\.1:\d+\s+<none>\s+READY\s/,
  );
  t.match(listed.stdout, /\nteam\s+extra\s+Extra\s+grpc\s+quay\.io\/example\/catalog:latest\s/);
  const removed = await olmq('catalog', 'remove', 'extra', '-n', 'team');
  t.equal(removed.code, 0, removed.stderr);
  const again = await olmq('catalog', 'remove', 'extra', '-n', 'team');
  t.equal(again.code, 1);
  t.match(
    again.stderr,
    /catalogsources\.operators\.coreos\.com "extra" not found in namespace "team"/,
  );
});
