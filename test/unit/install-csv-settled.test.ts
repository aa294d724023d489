// A namespace pass is settled when deciding again on the statuses it writes changes nothing:
// the echo of its status writes then starts no pass (functions/install/csv/echoes.ts).
import t from 'tap';
import { csvNamespaceSnapshot } from '../harness/csv-snapshot.js';
import type { KubeObject } from '../../shared/kube/client.js';
import { decideNamespace } from '../../functions/install/csv/decide.js';
import { SettledEchoes } from '../../functions/install/csv/echoes.js';
import { csvCleanupFinalizer } from '../../functions/install/csv/gates.js';
import { deploymentFor } from '../../functions/install/csv/deployments.js';
import type { CsvNamespaceSnapshot, CsvObject } from '../harness/install-fixtures.js';
import { smallBundle } from '../harness/install-plan.js';

const now = new Date('2026-01-01T00:00:00Z');
const og: KubeObject = {
  apiVersion: 'operators.coreos.com/v1',
  kind: 'OperatorGroup',
  metadata: { name: 'og', namespace: 'ns1' },
  spec: { targetNamespaces: ['ns1'] },
  status: { namespaces: ['ns1'] },
};
const sa: KubeObject = {
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: { name: 'etcd-operator', namespace: 'ns1' },
};

// The etcd CSV, annotated for its group, with no CRDs to require (none are in the snapshot).
async function etcdCsv(status: CsvObject['status']): Promise<CsvObject> {
  const { csv } = await smallBundle('etcd', 'etcdoperator.v0.9.4');
  return {
    ...(csv as CsvObject),
    metadata: {
      ...csv.metadata,
      namespace: 'ns1',
      uid: 'csv-uid',
      finalizers: [csvCleanupFinalizer],
      annotations: {
        ...csv.metadata.annotations,
        'olm.operatorGroup': 'og',
        'olm.operatorNamespace': 'ns1',
        'olm.targetNamespaces': 'ns1',
      },
    },
    spec: { ...(csv as CsvObject).spec, customresourcedefinitions: {} },
    status,
  };
}

function healthyDeployment(csv: CsvObject): KubeObject {
  const [entry] = (
    csv.spec?.['install'] as {
      spec: { deployments: { name: string; spec: Record<string, unknown> }[] };
    }
  ).spec.deployments;
  const intended = deploymentFor({ csv, entry: entry! });
  return {
    ...intended,
    metadata: { ...intended.metadata, generation: 1 },
    status: {
      observedGeneration: 1,
      updatedReplicas: 1,
      conditions: [{ type: 'Available', status: 'True' }],
    },
  };
}

const snapshot = (csvs: CsvObject[], extra: Partial<CsvNamespaceSnapshot> = {}) =>
  csvNamespaceSnapshot(now, csvs, [og], { serviceAccounts: [sa], ...extra });

t.test('csv settled - Installing with a healthy deployment goes Succeeded, settled', async (t) => {
  const csv = await etcdCsv({ phase: 'Installing', reason: 'InstallSucceeded' });
  const [d] = decideNamespace(snapshot([csv], { deployments: [healthyDeployment(csv)] })).writes
    .csvs;
  t.match(d?.status, { phase: 'Succeeded', reason: 'InstallSucceeded' });
  t.equal(d?.settled, true, 'deciding again on Succeeded changes nothing');
});

t.test('csv settled - a pass that writes objects is not settled', async (t) => {
  const csv = await etcdCsv({ phase: 'InstallReady', reason: 'AllRequirementsMet' });
  const [d] = decideNamespace(snapshot([csv])).writes.csvs;
  t.match(d?.writes, [{ op: 'create', object: { kind: 'Deployment' } }]);
  t.not(d?.settled, true);
});

t.test(
  'csv settled - Deleting is not settled: the next pass deletes the CSV (it waits for the echo)',
  async (t) => {
    const old = await etcdCsv({ phase: 'Replacing', reason: 'BeingReplaced' });
    old.metadata.name = 'etcdoperator.v0.9.2';
    const next = await etcdCsv({ phase: 'Succeeded', reason: 'InstallSucceeded' });
    next.spec = { ...next.spec, replaces: 'etcdoperator.v0.9.2' };
    const passes = decideNamespace(
      snapshot([old, next], { deployments: [healthyDeployment(next)] }),
    ).writes.csvs;
    t.match(passes[0]?.status, { phase: 'Deleting', reason: 'Replaced' });
    t.not(passes[0]?.settled, true);
  },
);

t.test('csv settled - an echo is skipped once, only at the version written', (t) => {
  const echoes = new SettledEchoes();
  echoes.remember('c1', 'ns1', 'csv', '42');
  t.notOk(echoes.take('c1', 'ns1', 'csv', '41'), 'another version wakes the namespace');
  t.notOk(echoes.take('c1', 'ns2', 'csv', '42'), 'another namespace does');
  t.ok(echoes.take('c1', 'ns1', 'csv', '42'), 'the written version is the echo');
  t.notOk(echoes.take('c1', 'ns1', 'csv', '42'), 'seen once');
  t.end();
});
