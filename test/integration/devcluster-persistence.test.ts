// Durable storage: with --data-dir nothing acknowledged is lost across a clean restart or a
// kill -9 of the `devcluster` process.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, makeInformer, type V1ConfigMap } from '@kubernetes/client-node';
import t from 'tap';
import { startCluster } from '../harness/devcluster.js';
import { waitFor } from '../harness/wait.js';

const olmq = join(import.meta.dirname, '..', '..', 'cli', 'main.js');

interface Running {
  child: ChildProcess;
  core: CoreV1Api;
  exited: Promise<number | null>;
}

async function launch(dataDir: string, kubeconfig: string): Promise<Running> {
  const child = spawn(
    process.execPath,
    [
      olmq,
      'devcluster',
      '--port',
      '0',
      '--kubeconfig',
      kubeconfig,
      '--data-dir',
      dataDir,
      '--pod-ready-delay',
      '0',
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await waitFor(
    'the devcluster to print ready',
    () => (output.includes('ready') ? true : undefined),
    30_000,
  );
  const kc = new KubeConfig();
  kc.loadFromString(readFileSync(kubeconfig, 'utf8'));
  return { child, core: kc.makeApiClient(CoreV1Api), exited };
}

let dir: string;
t.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'olmq-devcluster-persist-'));
});
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

void t.test('persistence - objects acknowledged before kill -9 survive the restart', async (t) => {
  const dataDir = join(dir, 'kill');
  const kubeconfig = join(dir, 'kill.kubeconfig');
  const first = await launch(dataDir, kubeconfig);
  const names: string[] = [];
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < 200; i++) {
    const name = `cm-${i}`;
    names.push(name);
    writes.push(
      first.core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name }, data: { i: String(i) } },
      }),
    );
  }
  await Promise.all(writes);
  await first.core.deleteNamespacedConfigMap({ namespace: 'default', name: 'cm-0' });
  const rvBefore = (await first.core.listNamespacedConfigMap({ namespace: 'default' })).metadata
    ?.resourceVersion;
  first.child.kill('SIGKILL');
  await first.exited;

  const second = await launch(dataDir, kubeconfig);
  t.teardown(async () => {
    second.child.kill('SIGTERM');
    await second.exited;
  });
  const list = await second.core.listNamespacedConfigMap({ namespace: 'default' });
  const found = new Set(list.items.map((i) => i.metadata?.name));
  t.equal(found.size, 199);
  t.notOk(found.has('cm-0'), 'the deletion survived too');
  t.ok(found.has('cm-199'));
  t.ok(
    Number(list.metadata?.resourceVersion) >= Number(rvBefore),
    'resourceVersion keeps increasing',
  );
  const created = await second.core.createNamespacedConfigMap({
    namespace: 'default',
    body: { metadata: { name: 'after' } },
  });
  t.ok(Number(created.metadata?.resourceVersion) > Number(rvBefore));
});

void t.test('persistence - a clean SIGTERM shutdown exits 0 and keeps everything', async (t) => {
  const dataDir = join(dir, 'clean');
  const kubeconfig = join(dir, 'clean.kubeconfig');
  const first = await launch(dataDir, kubeconfig);
  await first.core.createNamespace({ body: { metadata: { name: 'kept' } } });
  await first.core.createNamespacedSecret({
    namespace: 'kept',
    body: { metadata: { name: 's' }, stringData: { k: 'v' } },
  });
  first.child.kill('SIGTERM');
  t.equal(await first.exited, 0);
  const second = await launch(dataDir, kubeconfig);
  t.teardown(async () => {
    second.child.kill('SIGTERM');
    await second.exited;
  });
  const secret = await second.core.readNamespacedSecret({ namespace: 'kept', name: 's' });
  t.equal(Buffer.from(secret.data?.['k'] ?? '', 'base64').toString(), 'v');
});

void t.test(
  'persistence - watchers of a durable cluster receive each change once it is on disk',
  async (t) => {
    const fixture = await startCluster({ dataDir: join(dir, 'watch') });
    t.teardown(() => fixture.close());
    const core = fixture.kubeConfig.makeApiClient(CoreV1Api);
    const informer = makeInformer<V1ConfigMap>(
      fixture.kubeConfig,
      '/api/v1/namespaces/default/configmaps',
      () => core.listNamespacedConfigMap({ namespace: 'default' }),
    );
    const seen: string[] = [];
    informer.on('add', (o) => seen.push(`add:${o.metadata?.name ?? ''}`));
    informer.on('update', (o) => seen.push(`update:${o.metadata?.name ?? ''}`));
    await informer.start();
    t.teardown(() => informer.stop());
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        core.createNamespacedConfigMap({
          namespace: 'default',
          body: { metadata: { name: `w-${i}` } },
        }),
      ),
    );
    await core.replaceNamespacedConfigMap({
      namespace: 'default',
      name: 'w-0',
      body: { metadata: { name: 'w-0' }, data: { a: '1' } },
    });
    await waitFor('all adds and the update', () =>
      seen.filter((s) => s.startsWith('add:')).length === 20 && seen.includes('update:w-0')
        ? true
        : undefined,
    );
    t.equal(new Set(seen).size, seen.length, 'no event delivered twice');
  },
);
