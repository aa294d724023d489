// Writes that ask for the written object's metadata alone (the executor's writes) get a
// PartialObjectMetadata answer, and still carry out the whole write.
import t from 'tap';
import type { KubeObject } from '../../shared/kube/client.js';
import { clusterFor } from '../harness/backbone.js';

const configMap = (name: string): KubeObject & { data: Record<string, string> } => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default' },
  data: { big: 'x'.repeat(4096) },
});

t.test(
  'kube client - a write asking for metadata is answered with the metadata alone',
  async (t) => {
    const { client } = await clusterFor(t);
    const whole = await client.create(configMap('whole'));
    t.equal(whole.data['big']?.length, 4096, 'by default the answer is the object');

    const created = await client.create(configMap('lean'), { answer: 'metadata' });
    t.equal(created.kind, 'PartialObjectMetadata');
    t.notOk('data' in created, 'the answer leaves the data out');
    t.ok(created.metadata.resourceVersion, 'and names the new resourceVersion');

    const updated = await client.update(
      { ...configMap('lean'), data: { big: 'y' }, metadata: created.metadata },
      { fieldManager: 'test', answer: 'metadata' },
    );
    t.equal(updated.kind, 'PartialObjectMetadata');
    t.not(updated.metadata.resourceVersion, created.metadata.resourceVersion);
    const patched = await client.patch(
      { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'lean' },
      'merge',
      { data: { more: 'z' } },
      { answer: 'metadata' },
    );
    t.equal(patched.kind, 'PartialObjectMetadata');
    const stored = await client.get<KubeObject & { data: Record<string, string> }>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'default',
      name: 'lean',
    });
    t.same(stored?.data, { big: 'y', more: 'z' }, 'both writes landed whole');
  },
);
