// Which CSV changes start copy-csv work: a source's status changes reach its copies only where
// it has some, so those of a source targeting its own namespace alone start nothing.
import t from 'tap';
import { csvTrigger } from '../../functions/copy-csv/source-definition.js';
import type { CsvObject } from '../../shared/operator-group/index.js';
import type { ObjectChange } from '../../shared/runtime/types.js';

const csv = (targets: string | undefined, labels: Record<string, string> = {}): CsvObject => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: {
    name: 'etcd.v1',
    namespace: 'ns1',
    labels,
    annotations: targets === undefined ? {} : { 'olm.targetNamespaces': targets },
  },
  spec: {},
  status: { phase: 'Installing' },
});

// A change that touched `parts` only (deletions: object undefined).
const change = (object: CsvObject | undefined, touched: readonly string[]): ObjectChange => ({
  ref: { cluster: 'c1', kind: 'ClusterServiceVersion', namespace: 'ns1', name: 'etcd.v1' },
  object,
  touches: (parts) => parts.some((p) => touched.includes(p)),
  differs: () => true,
});

const queues = async (c: ObjectChange): Promise<string[]> =>
  (await csvTrigger.workKeys(c)).map((w) => w.queue);

t.test('copy-csv wakes - a status change starts the source only where copies may be', async (t) => {
  const status = ['status'];
  t.same(await queues(change(csv('ns1'), status)), [], 'own namespace only: no copies');
  t.same(await queues(change(csv(undefined), status)), [], 'no group yet: no copies');
  t.same(await queues(change(csv('ns1,ns2'), status)), ['copy-csv-source'], 'other targets');
  t.same(await queues(change(csv(''), status)), ['copy-csv-source'], 'all namespaces');
  t.same(
    await queues(change(csv('ns1'), ['metadata'])),
    ['copy-csv-source'],
    'a metadata change (targets narrowed: copies elsewhere go) starts it',
  );
  t.same(await queues(change(csv('ns1'), ['spec'])), ['copy-csv-source'], 'a spec change too');
  t.same(
    await queues(change(undefined, [])),
    ['copy-csv-namespace', 'copy-csv-source'],
    'a deletion starts both',
  );
});
