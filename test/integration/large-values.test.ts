// Values larger than NATS's default max payload (1 MiB) on a nats-server started with its
// defaults: a real 1 MB CSV mirrored by the watcher and read back whole by every reader, a
// hand-off record over 1 MiB, their uploads purged when the key moves on, and the watcher's
// readiness while a publish keeps failing.
import t from 'tap';
import { z } from 'zod';
import { Registry } from 'prom-client';
import type { Backbone } from '../../shared/bus/backbone.js';
import { defaultMaxPayload, inlineLimit, storeBody } from '../../shared/bus/large-values.js';
import { getMirrored, listMirrored, mirroredBodyRef } from '../../shared/bus/mirror-read.js';
import { openMirrorView } from '../../shared/bus/mirror-view.js';
import { assets, bodyFilter, kvStream, objectKey } from '../../shared/bus/subjects.js';
import { publishDeadLetter } from '../../shared/bus/dead-letters.js';
import {
  consumeChanges,
  errorTextLimit,
  readFailures,
  recordFailures,
} from '../../shared/bus/work-queue.js';
import { defaultFunctionHostOptions } from '../../shared/runtime/host-options.js';
import { createFunctionMetrics } from '../../shared/runtime/metrics.js';
import { handOffRecordType } from '../../shared/handoff/index.js';
import type { KubeObject } from '../../shared/kube/client.js';
import { runTrigger } from '../../shared/runtime/trigger-loop.js';
import type { ObjectChange } from '../../shared/runtime/types.js';
import { mirroredKinds } from '../../watcher/kinds.js';
import { backboneFor, clusterFor } from '../harness/backbone.js';
import { largeCsv } from '../harness/large-csv.js';
import { capturingLogger } from '../harness/log.js';
import { waitFor } from '../harness/wait.js';
import { watcherFor } from '../harness/watcher.js';

/** Chunk messages of every upload of `key` in OLMQ_BODIES. */
async function uploadsOf(backbone: Backbone, key: string): Promise<string[]> {
  const info = await backbone.jsm.streams.info(assets.bodyStream, {
    subjects_filter: bodyFilter(key),
  });
  return Object.keys(info.state.subjects ?? {});
}

const blob = (size: number, fill: string): string => fill.repeat(size);

t.test(
  'large values - a hand-off record over 1 MiB is put, read, listed, replaced and deleted whole',
  async (t) => {
    const backbone = await backboneFor(t);
    t.equal(backbone.nc.info?.max_payload, defaultMaxPayload, "the server's default max payload");
    const records = handOffRecordType(
      'BigRecord',
      z.object({ name: z.string(), blob: z.string() }),
    );
    const ref = { cluster: 'c1', namespace: 'ns1', name: 'r' };
    const key = objectKey({ ...ref, kind: 'BigRecord' });

    const first = { name: 'r', blob: blob(1_300_000, 'a') };
    await records.put(backbone, ref, first);
    t.same(await records.read(backbone, ref), first, 'read back whole');
    t.same(await records.list(backbone, 'c1', 'ns1'), [first], 'listed whole');
    t.same(await records.list(backbone, 'c1'), [first], 'listed whole across namespaces');
    t.equal((await uploadsOf(backbone, key)).length, 1, 'stored as one upload');
    const firstUpload = await mirroredBodyRef(backbone, key);
    t.ok(firstUpload, 'the entry holds a reference');

    const second = { name: 'r', blob: blob(2_500_000, 'b') };
    await records.put(backbone, ref, second);
    t.same(await records.read(backbone, ref), second, 'the replacement read back whole');
    const uploads = await uploadsOf(backbone, key);
    t.equal(uploads.length, 1, "the first upload is purged once it's replaced");
    t.not(uploads[0], firstUpload?.subject);

    const small = { name: 'r', blob: 'tiny' };
    await records.put(backbone, ref, small);
    t.same(await records.read(backbone, ref), small);
    t.same(await uploadsOf(backbone, key), [], 'a small value leaves no upload behind');

    await records.put(backbone, ref, first);
    await records.delete(backbone, ref);
    t.equal(await records.read(backbone, ref), undefined, 'deleted');
    t.same(await uploadsOf(backbone, key), [], 'a deletion leaves no upload behind');
    const stream = await backbone.jsm.streams.info(assets.bodyStream);
    t.equal(stream.state.messages, 0, 'the bodies stream is empty');
  },
);

t.test(
  'large values - the watcher mirrors a 1 MB CSV by reference; every reader sees it whole, and its upload goes with it',
  async (t) => {
    const cluster = await clusterFor(t);
    const backbone = await backboneFor(t);
    const kinds = mirroredKinds.filter((k) =>
      ['Namespace', 'ClusterServiceVersion'].includes(k.kind),
    );
    const watcher = await watcherFor(t, cluster.fixture, backbone, { kinds });
    await watcher.synced();
    const view = await openMirrorView<KubeObject>(backbone, 'ClusterServiceVersion');
    t.teardown(() => view.stop());

    await cluster.client.create({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'big' },
    });
    const csv = await largeCsv();
    const { status: _status, ...manifest } = csv;
    const name = String(csv.metadata.name);
    const created = await cluster.client.create({
      ...manifest,
      metadata: { ...csv.metadata, namespace: 'big' },
    });
    const ref = { cluster: 'c1', kind: 'ClusterServiceVersion', namespace: 'big', name };
    const key = objectKey(ref);
    const owned = (o: KubeObject | undefined) =>
      (o?.['spec'] as { customresourcedefinitions?: { owned?: unknown[] } } | undefined)
        ?.customresourcedefinitions?.owned?.length;

    const mirrored = await waitFor('the large CSV in the mirror', () =>
      getMirrored<KubeObject>(backbone, ref),
    );
    t.ok(
      JSON.stringify(mirrored).length > inlineLimit(backbone),
      'larger than a publish may carry',
    );
    t.equal(owned(mirrored), 14, 'the owned CRDs arrive whole');
    t.equal(mirrored.metadata.resourceVersion, created.metadata.resourceVersion);
    t.ok(await mirroredBodyRef(backbone, key), 'the entry holds a reference');
    const listed = await listMirrored<KubeObject>(backbone, {
      cluster: 'c1',
      kind: 'ClusterServiceVersion',
      namespace: 'big',
    });
    t.equal(owned(listed[0]), 14, 'listed whole');
    await view.current();
    t.equal(owned(view.list('c1', 'big')[0]), 14, 'a live view holds it whole');
    t.equal(watcher.publishFailures(), '', 'nothing is failing: the watcher is ready');

    // Smaller now: the entry is inline again and the upload is purged.
    const current = await cluster.client.get<KubeObject>({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      namespace: 'big',
      name,
    });
    await cluster.client.update({
      ...current,
      spec: { ...(current?.['spec'] as object), customresourcedefinitions: {} },
    } as KubeObject);
    await waitFor(
      'the small CSV in the mirror, its upload purged',
      async () =>
        owned(await getMirrored<KubeObject>(backbone, ref)) === undefined &&
        (await uploadsOf(backbone, key)).length === 0,
    );
    await view.current();
    t.equal(owned(view.list('c1', 'big')[0]), undefined, 'the view follows');

    await cluster.client.delete({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      namespace: 'big',
      name,
    });
    await waitFor(
      'the CSV gone from the mirror',
      async () => (await getMirrored(backbone, ref)) === undefined,
    );
    t.same(await uploadsOf(backbone, key), []);
  },
);

t.test(
  'large values - while a change cannot be published the watcher says so (not ready), and recovers when it lands',
  async (t) => {
    const cluster = await clusterFor(t);
    const backbone = await backboneFor(t);
    const kinds = mirroredKinds.filter((k) => ['Namespace'].includes(k.kind));
    const { log, lines } = capturingLogger('warn');
    const watcher = await watcherFor(t, cluster.fixture, backbone, {
      kinds,
      log,
      registry: new Registry(),
    });
    await watcher.synced();
    t.equal(watcher.publishFailures(), '');

    // The mirror's stream refuses every message over 64 bytes: a refusal no retry can fix.
    const stream = kvStream(assets.objects);
    const { config } = await backbone.jsm.streams.info(stream);
    await backbone.jsm.streams.update(stream, { ...config, max_msg_size: 64 });
    await cluster.client.create({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'refused' },
    });
    const reason = await waitFor('the watcher to report the failing publish', () =>
      watcher.publishFailures(),
    );
    t.match(reason, /1 mirror publish\(es\) failing.*maximum/i, 'names the count and the error');
    t.ok(
      lines.some((l) => l['msg'] === 'mirror publish failed; will retry'),
      'logged as a warning',
    );

    await backbone.jsm.streams.update(stream, { ...config, max_msg_size: -1 });
    await waitFor(
      'the change to land once the stream takes it',
      async () =>
        (await getMirrored(backbone, {
          cluster: 'c1',
          kind: 'Namespace',
          namespace: '',
          name: 'refused',
        })) !== undefined,
      15_000,
    );
    t.equal(watcher.publishFailures(), '', 'ready again');
  },
);

t.test(
  'large values - a work item failing with a 2 MiB error is recorded and dead-lettered, its error cut short',
  async (t) => {
    const backbone = await backboneFor(t);
    const error = `the API said no: ${'x'.repeat(2 * 1024 * 1024)}`;
    const itemKey = 'widgets.c1.ns1.broken';
    await recordFailures(backbone, itemKey, { failures: 3, lastError: error });
    const record = await readFailures(backbone, itemKey);
    t.equal(record.failures, 3);
    t.ok(record.lastError.startsWith('the API said no: xxx'));
    t.ok(record.lastError.length <= errorTextLimit + 20, 'cut to the limit');
    await publishDeadLetter(backbone, {
      function: 'widgets',
      cluster: 'c1',
      key: ['ns1', 'broken'],
      failures: 3,
      error,
      at: new Date(0).toISOString(),
    });
    const dead = await backbone.jsm.streams.getMessage(assets.deadStream, { seq: 1 });
    t.match(dead?.json(), {
      key: ['ns1', 'broken'],
      error: /^the API said no: x+… \(truncated\)$/,
    });
  },
);

t.test(
  'large values - a trigger that looks at a referenced object gets it whole; one mapping keys alone sees every change too',
  async (t) => {
    const backbone = await backboneFor(t);
    const big = {
      metadata: { name: 'w1', namespace: 'ns1' },
      spec: { blob: blob(1_200_000, 'w') },
    };
    const small = { metadata: { name: 'w2', namespace: 'ns1' }, spec: { blob: 'tiny' } };
    const records = handOffRecordType('Widget', z.unknown());
    await records.put(backbone, { cluster: 'c1', namespace: 'ns1', name: 'w1' }, big);
    await records.put(backbone, { cluster: 'c1', namespace: 'ns1', name: 'w2' }, small);
    // One consumer per trigger: one looks at objects, the other maps keys alone.
    const seen = new Map<string, unknown>();
    const mapped: string[] = [];
    const stopping = new AbortController();
    t.teardown(() => stopping.abort());
    const metrics = createFunctionMetrics(new Registry());
    const host = (queue: string) => ({
      backbone,
      queue,
      metrics,
      options: {
        ...defaultFunctionHostOptions,
        lastSeenLimit: 100,
        triggerWindow: 4,
        baseBackoffMs: 10,
      },
      log: capturingLogger('warn').log,
      stopping: stopping.signal,
      settle: (action: () => void) => backbone.pipe.later(action),
    });
    for (const [queue, trigger] of [
      [
        'looks',
        {
          kind: 'Widget',
          workKeys: (c: ObjectChange) => {
            seen.set(c.ref.name, c.object);
            return [];
          },
        },
      ],
      [
        'maps',
        {
          kind: 'Widget',
          workKeys: (c: ObjectChange) => {
            mapped.push(c.ref.name);
            return [];
          },
        },
      ],
    ] as const) {
      const { messages } = await consumeChanges(backbone, queue, 'Widget', {
        ackWaitMs: 5_000,
        window: 4,
      });
      t.teardown(() => messages.stop());
      void runTrigger(trigger, messages, host(queue));
    }
    await waitFor(
      'both triggers to see both widgets',
      () => seen.size === 2 && mapped.length === 2,
    );
    t.same(seen.get('w1'), big, 'the referenced object, whole');
    t.same(seen.get('w2'), small);
    t.same(mapped.sort(), ['w1', 'w2']);
  },
);

t.test(
  'large values - after its list the watcher sweeps uploads no entry references',
  async (t) => {
    const cluster = await clusterFor(t);
    const backbone = await backboneFor(t);
    // Left behind by a watcher stopped between an upload and its reference.
    const key = objectKey({ cluster: 'c1', kind: 'Namespace', namespace: '', name: 'default' });
    const orphan = await storeBody(backbone, key, new TextEncoder().encode(blob(1_100_000, 'o')));
    t.same(await uploadsOf(backbone, key), [orphan.subject]);
    const kinds = mirroredKinds.filter((k) => k.kind === 'Namespace');
    const watcher = await watcherFor(t, cluster.fixture, backbone, { kinds });
    await watcher.synced();
    t.same(await uploadsOf(backbone, key), [], 'purged');
    t.ok(
      await getMirrored(backbone, {
        cluster: 'c1',
        kind: 'Namespace',
        namespace: '',
        name: 'default',
      }),
    );
  },
);
