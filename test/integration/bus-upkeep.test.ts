// The backbone's upkeep on a real nats-server: old delete markers of the mirror are purged (a
// value written after a marker survives, young markers stay), stream fill is a gauge with a
// warning near the limit, and the backbone applies its limits and replicas.
import t from 'tap';
import { Registry } from 'prom-client';
import { openBackbone } from '../../shared/bus/backbone.js';
import { assets, kvStream } from '../../shared/bus/subjects.js';
import { purgeDeleteMarkers, startUpkeep } from '../../shared/bus/upkeep.js';
import { backboneFor } from '../harness/backbone.js';
import { capturingLogger } from '../harness/log.js';

const mirror = kvStream(assets.objects);

t.test('bus upkeep - old delete markers are purged; values and young markers stay', async (t) => {
  const backbone = await backboneFor(t);
  const { objects } = backbone;
  await objects.put('c1.ConfigMap.ns.gone', '{}');
  await objects.delete('c1.ConfigMap.ns.gone');
  await objects.put('c1.ConfigMap.ns.back', '{}');
  await objects.delete('c1.ConfigMap.ns.back');
  await objects.put('c1.ConfigMap.ns.back', '{"again":true}');
  await objects.put('c1.ConfigMap.ns.kept', '{}');
  const before = await backbone.jsm.streams.info(mirror);
  t.equal(before.state.messages, 3, 'one message per key: two values and one marker');

  t.equal(await purgeDeleteMarkers(backbone, mirror, 60_000), 0, 'a young marker stays');
  // Seen from an hour later, the marker is old.
  const purged = await purgeDeleteMarkers(backbone, mirror, 60_000, Date.now() + 3_600_000);
  t.equal(purged, 1);
  const after = await backbone.jsm.streams.info(mirror);
  t.equal(after.state.messages, 2);
  t.same((await objects.get('c1.ConfigMap.ns.back'))?.json(), { again: true });
  t.equal(await objects.get('c1.ConfigMap.ns.gone'), null);
});

t.test('bus upkeep - stream fill is measured and a full stream is warned about', async (t) => {
  const backbone = await backboneFor(t, {
    limits: {
      objectsBytes: 4096,
      workBytes: 1 << 20,
      deadBytes: 1 << 20,
      leasesBytes: 1 << 20,
      attemptsBytes: 1 << 20,
      catalogsBytes: 1 << 20,
    },
  });
  t.equal((await backbone.jsm.streams.info(mirror)).config.max_bytes, 4096, 'limit applied');
  for (let i = 0; i < 20; i++) await backbone.objects.put(`c1.ConfigMap.ns.o${i}`, 'x'.repeat(100));
  const { log, lines } = capturingLogger('warn');
  const registry = new Registry();
  const upkeep = startUpkeep(backbone, { log, registry, purgeDeletesAfterMs: 3_600_000 });
  t.teardown(() => upkeep.stop());
  await upkeep.measure();
  const metric = await registry.getSingleMetric('olmq_jetstream_stream_usage_ratio')?.get();
  const ratio = metric?.values.find((v) => v.labels['stream'] === mirror)?.value ?? 0;
  t.ok(ratio >= 0.8, `mirror is reported nearly full (${ratio})`);
  t.ok(
    lines.some((l) => l['stream'] === mirror && /full/.test(String(l['msg']))),
    'a warning names the stream',
  );
});

t.test(
  'bus upkeep - a process without --stream-replicas keeps the existing limits and replicas',
  async (t) => {
    const backbone = await backboneFor(t);
    const again = await openBackbone(backbone.nc, {
      limits: { ...backbone.options.limits, workBytes: 2 << 20 },
    });
    t.equal(
      (await again.jsm.streams.info(assets.workStream)).config.max_bytes,
      2 << 20,
      'limit changed',
    );
    t.equal((await again.jsm.streams.info(assets.workStream)).config.num_replicas, 1);
    const unchanged = await backbone.jsm.streams.info(kvStream(assets.leases));
    t.equal(unchanged.config.num_replicas, 1);
  },
);
