// A namespace pass of the CSV lifecycle reads the CSVs from the mirror only when the mirror
// shows the CSV writes of its earlier passes and no CSV needs a whole-object update.
import t from 'tap';
import type { Csv } from '../../functions/install/csv-status.js';
import { csvCleanupFinalizer } from '../../functions/install/csv/gates.js';
import { mirroredCsvsServe } from '../../functions/install/csv/load.js';
import { OwnWrites } from '../../shared/kube/own-writes.js';

const where = { cluster: 'c1', namespace: 'ns' };

const csv = (
  name: string,
  resourceVersion: string,
  extra: Partial<Csv['metadata']> = { finalizers: [csvCleanupFinalizer] },
): Csv =>
  ({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name, namespace: 'ns', resourceVersion, ...extra },
    spec: {},
  }) as unknown as Csv;

const copy = (name: string) => csv(name, '1', { labels: { 'olm.copiedFrom': 'other' } });

void t.test('csv load - the mirror serves when it shows the pass writes', (t) => {
  const ledger = new OwnWrites();
  t.ok(mirroredCsvsServe([csv('a.v1', '5')], ledger, where), 'nothing written');
  ledger.wrote('c1', { op: 'updateStatus', object: csv('a.v1', '5') }, '6');
  t.notOk(mirroredCsvsServe([csv('a.v1', '5')], ledger, where), 'the status written lags');
  t.ok(mirroredCsvsServe([csv('a.v1', '6')], ledger, where), 'the status written is shown');
  ledger.conflicted('c1', 'ns');
  t.notOk(mirroredCsvsServe([csv('a.v1', '7')], ledger, where), 'after a conflict');
  t.end();
});

void t.test('csv load - whole-object updates and replacing copies read the API', (t) => {
  const ledger = new OwnWrites();
  t.notOk(mirroredCsvsServe([csv('a.v1', '1', {})], ledger, where), 'finalizer to add');
  t.notOk(
    mirroredCsvsServe(
      [csv('a.v1', '1', { finalizers: [csvCleanupFinalizer], deletionTimestamp: 'x' })],
      ledger,
      where,
    ),
    'being deleted',
  );
  t.notOk(
    mirroredCsvsServe([csv('a.v1', '1'), copy('b.v2')], ledger, where),
    'a copy beside a CSV of the namespace (its spec is trimmed in the mirror)',
  );
  t.ok(mirroredCsvsServe([copy('b.v2'), copy('c.v1')], ledger, where), 'copies alone');
  t.end();
});
