// Fencing: a watcher deposed while its writes were still on the way (paused, or cut off from
// the API server but not from NATS) publishes a stale value after the standby took over. The
// late write is replayed here exactly as the deposed watcher made it (its headers, its epoch),
// and functions' ways of reading the mirror must never take it; the mirror ends equal to the
// cluster.
import { DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/transport-node';
import t from 'tap';
import { Registry } from 'prom-client';
import type { Backbone } from '../../shared/bus/backbone.js';
import { EpochRecordSchema, FencedEntryError, epochHeader } from '../../shared/bus/fencing.js';
import { getMirrored } from '../../shared/bus/mirror-read.js';
import { openMirrorView } from '../../shared/bus/mirror-view.js';
import {
  directGetLastSubject,
  epochKey,
  mirrorKindFilter,
  mirrorStream,
  mirrorSubject,
  objectKey,
} from '../../shared/bus/subjects.js';
import type { KubeObject } from '../../shared/kube/client.js';
import { defaultFunctionHostOptions } from '../../shared/runtime/host-options.js';
import { createFunctionMetrics } from '../../shared/runtime/metrics.js';
import { runTrigger } from '../../shared/runtime/trigger-loop.js';
import { mirroredKinds } from '../../watcher/kinds.js';
import { backboneFor, clusterFor } from '../harness/backbone.js';
import { capturingLogger } from '../harness/log.js';
import { waitFor } from '../harness/wait.js';
import { watcherFor } from '../harness/watcher.js';

const kinds = mirroredKinds.filter((k) => ['Subscription', 'Namespace'].includes(k.kind));
const ref = { cluster: 'c1', kind: 'Subscription', namespace: 'default', name: 'etcd' };
type Sub = KubeObject & { spec: { channel: string } };

// The mirror entry of the Subscription as stored: its headers and value.
async function rawEntry(backbone: Backbone) {
  const answer = await backbone.pipe.request(
    directGetLastSubject(mirrorStream, mirrorSubject(objectKey(ref))),
  );
  return { headers: answer.headers, object: answer.json<Sub>() };
}

async function counted(registry: Registry, reader: string): Promise<number> {
  const metric = await registry.getSingleMetric('olmq_mirror_fenced_writes_total')?.get();
  return metric?.values.find((v) => v.labels.reader === reader)?.value ?? 0;
}

t.test(
  "watcher fencing - a deposed watcher's late write is refused by every reader and written over",
  async (t) => {
    const { fixture, client } = await clusterFor(t);
    const backbone = await backboneFor(t);
    const registry = new Registry();
    const first = await watcherFor(t, fixture, backbone, {
      identity: 'replica-a',
      registry,
      kinds,
    });
    await first.synced();
    const created = await client.create({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name: 'etcd', namespace: 'default' },
      spec: { name: 'etcd', source: 'community', sourceNamespace: 'olm', channel: 'stable' },
    });
    await waitFor('the Subscription mirrored', async () => {
      return (await getMirrored<Sub>(backbone, ref))?.spec.channel === 'stable';
    });
    // What replica-a wrote: the write it would make again late (a retry after a pause).
    const late = await rawEntry(backbone);
    t.equal(late.headers?.get(epochHeader), '0', "replica-a's writes carry its epoch");

    const second = await watcherFor(t, fixture, backbone, {
      identity: 'replica-b',
      registry,
      kinds,
    });
    await first.stop(); // hands the Lease back: replica-b takes over with the next epoch
    await waitFor('replica-b to lead', () => second.isLeading());
    await second.synced();
    const record = EpochRecordSchema.parse(
      await (await backbone.objects.get(epochKey('c1')))?.json(),
    );
    t.same(record, { epoch: 1, holder: 'replica-b' }, 'replica-b recorded its epoch');

    await client.update({ ...created, spec: { ...(created.spec as object), channel: 'alpha' } });
    await waitFor('the update mirrored by replica-b', async () => {
      const entry = await rawEntry(backbone);
      return entry.object.spec.channel === 'alpha' && entry.headers?.get(epochHeader) === '1';
    });

    // Readers that follow the mirror from before the late write: a view, and a trigger.
    const view = await openMirrorView<Sub>(backbone, 'Subscription');
    t.teardown(() => view.stop());
    const triggered: string[] = [];
    const stopping = new AbortController();
    const consumer = await backbone.js.consumers.get(mirrorStream, {
      filter_subjects: mirrorKindFilter('Subscription'),
      deliver_policy: DeliverPolicy.New,
    });
    const messages = await consumer.consume();
    const host = {
      backbone,
      log: capturingLogger('warn').log,
      queue: 'fencing-test',
      options: defaultFunctionHostOptions,
      metrics: createFunctionMetrics(new Registry()),
      settle: (action: () => void) => action(),
      stopping: stopping.signal,
    };
    const triggering = runTrigger(
      {
        kind: 'Subscription',
        workKeys(change) {
          triggered.push((change.object as Sub | undefined)?.spec.channel ?? 'deleted');
          return [];
        },
      },
      messages as AsyncIterable<JsMsg>,
      host,
    );
    t.teardown(async () => {
      stopping.abort();
      messages.stop();
      await triggering;
    });

    // The late write lands after the takeover (a new message id: not a JetStream duplicate).
    const h = natsHeaders();
    for (const [name, values] of late.headers ?? []) for (const v of values) h.append(name, v);
    const landed = await backbone.pipe.publish(
      mirrorSubject(objectKey(ref)),
      JSON.stringify(late.object),
      { headers: h, msgID: `late-${Date.now()}` },
    );
    t.notOk(landed.duplicate, 'the late write is stored in the stream');

    // Point reads never return it: either refused (retryable) or already written over.
    const seen = new Set<string>();
    await waitFor('the mirror written over by replica-b', async () => {
      try {
        const channel = (await getMirrored<Sub>(backbone, ref))?.spec.channel ?? 'absent';
        seen.add(channel);
      } catch (error) {
        if (!(error instanceof FencedEntryError)) throw error;
        seen.add('refused');
      }
      const entry = await rawEntry(backbone);
      return entry.headers?.get(epochHeader) === '1';
    });
    t.notOk(
      seen.has('stable'),
      `point reads never returned the stale value (saw ${[...seen].join(', ')})`,
    );
    t.equal((await getMirrored<Sub>(backbone, ref))?.spec.channel, 'alpha', 'equal to the cluster');

    await view.current();
    t.same(
      view.list('c1', 'default').map((s) => s.spec.channel),
      ['alpha'],
      'the view kept the current value',
    );
    await waitFor('the trigger to map the rewrite', () => triggered.includes('alpha'));
    t.same(triggered, ['alpha'], 'the trigger mapped no work from the late write');
    t.ok((await counted(registry, 'watcher')) >= 1, 'the watcher counted the fenced write');
    t.ok((await counted(registry, 'trigger')) >= 1, 'so did the trigger');
  },
);
