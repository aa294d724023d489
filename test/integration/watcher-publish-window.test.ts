// The mirror's flow control (watcher/publish-window.ts) against a real nats-server and the
// devcluster: never more than maxInFlight unacknowledged object publishes of a kind, and every
// key's last change lands (coalesced while it waited), deletions and the name index included.
import t from 'tap';
import { Registry } from 'prom-client';
import type { Backbone } from '../../shared/bus/backbone.js';
import { readNameIndex } from '../../shared/bus/mirror-read.js';
import { mirrorSubject, objectKey } from '../../shared/bus/subjects.js';
import type { KubeObject } from '../../shared/kube/client.js';
import { mirroredKinds } from '../../watcher/kinds.js';
import { startWatcher } from '../../watcher/index.js';
import { backboneFor, clusterFor } from '../harness/backbone.js';
import { capturingLogger } from '../harness/log.js';
import { waitFor } from '../harness/wait.js';

const namespace = 'window';
const count = 120;
const maxInFlight = 8;
const names = Array.from({ length: count }, (_, i) => `cm-${i}`);

// Counts the object publishes of ConfigMaps sent and not yet settled, through the real pipe.
function countInFlight(backbone: Backbone): { max: () => number; now: () => number } {
  const prefix = mirrorSubject('c1.ConfigMap.');
  const real = backbone.pipe.publish.bind(backbone.pipe);
  let now = 0;
  let max = 0;
  backbone.pipe.publish = (subject, payload, options) => {
    if (!subject.startsWith(prefix)) return real(subject, payload, options);
    now++;
    max = Math.max(max, now);
    return real(subject, payload, options).finally(() => now--);
  };
  return { max: () => max, now: () => now };
}

async function mirroredLabel(backbone: Backbone, name: string): Promise<string | undefined> {
  const entry = await backbone.objects.get(
    objectKey({ cluster: 'c1', kind: 'ConfigMap', namespace, name }),
  );
  if (entry === null || entry.operation !== 'PUT') return undefined;
  return entry.json<KubeObject>().metadata.labels?.['v'];
}

t.test(
  'watcher - at most maxInFlight unacknowledged publishes per kind, and every last change lands',
  async (t) => {
    const cluster = await clusterFor(t);
    const backbone = await backboneFor(t);
    await cluster.client.create({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    });
    const created = await Promise.all(
      names.map((name) =>
        cluster.client.create<KubeObject>({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, namespace, labels: { 'olm.managed': 'true', v: '0' } },
          data: { key: name },
        }),
      ),
    );
    const inFlight = countInFlight(backbone);
    const watcher = await startWatcher({
      cluster: { id: 'c1', kubeConfig: cluster.fixture.kubeConfig },
      backbone,
      log: capturingLogger('warn').log,
      registry: new Registry(),
      identity: 'replica-a',
      leaseNamespace: 'olmq-system',
      leaseName: 'olmq-watcher',
      leaseDurationSeconds: 15,
      kinds: mirroredKinds.filter((k) => k.kind === 'ConfigMap'),
      maxInFlight,
    });
    t.teardown(() => watcher.stop());
    await watcher.synced();
    await waitFor('the first list in the mirror', async () => {
      const labels = await Promise.all(names.map((n) => mirroredLabel(backbone, n)));
      return labels.every((v) => v === '0');
    });
    t.equal(
      inFlight.max(),
      maxInFlight,
      `the first list's ${count} puts filled the window, no more`,
    );

    // Two changes of each object, all objects at once: the window fills again, and a key whose
    // change waited for room is published with its newest value.
    await Promise.all(
      created.map(async (object) => {
        const labels = { 'olm.managed': 'true' };
        const first = await cluster.client.update<KubeObject>({
          ...object,
          metadata: { ...object.metadata, labels: { ...labels, v: '1' } },
        });
        await cluster.client.update<KubeObject>({
          ...first,
          metadata: { ...first.metadata, labels: { ...labels, v: '2' } },
        });
      }),
    );
    await waitFor(
      "every object's last change in the mirror",
      async () => {
        const labels = await Promise.all(names.map((n) => mirroredLabel(backbone, n)));
        return labels.every((v) => v === '2');
      },
      20_000,
    );
    t.ok(
      inFlight.max() <= maxInFlight,
      `never more than ${maxInFlight} in flight (saw ${inFlight.max()})`,
    );

    // Deletions go through the window too; each name leaves the index after its deletion.
    const [gone, kept] = [names.slice(0, count / 2), names.slice(count / 2)];
    await Promise.all(
      gone.map((name) =>
        cluster.client.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name }),
      ),
    );
    await waitFor(
      'the deletions in the mirror and the name index',
      async () => {
        const labels = await Promise.all(gone.map((n) => mirroredLabel(backbone, n)));
        const index = (await readNameIndex(backbone, 'c1', 'ConfigMap')).get(namespace);
        return (
          labels.every((v) => v === undefined) &&
          index?.slice().sort().join() === kept.slice().sort().join()
        );
      },
      20_000,
    );
    t.ok(
      inFlight.max() <= maxInFlight,
      `never more than ${maxInFlight} in flight (saw ${inFlight.max()})`,
    );
    await waitFor('every publish settled', () => inFlight.now() === 0);
    t.equal(watcher.publishFailures(), '', 'no publish failed');
  },
);
