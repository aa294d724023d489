import t from 'tap';
import { csvNamespaceSnapshot } from '../harness/csv-snapshot.js';
import type { KubeObject } from '../../shared/kube/client.js';
import { decideCsv } from '../../functions/install/csv/decide.js';
import { csvCleanupFinalizer } from '../../functions/install/csv/gates.js';
import {
  conversionWebhookProblem,
  crdOwnerConflict,
  replacementChain,
} from '../../functions/install/csv/ownership.js';
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
const etcdCrds = ['etcdclusters', 'etcdbackups', 'etcdrestores'].map(
  (n) => `${n}.etcd.database.coreos.com`,
);

async function etcdCsv(
  name: string,
  status?: CsvObject['status'],
  replaces?: string,
): Promise<CsvObject> {
  const { csv } = await smallBundle('etcd', 'etcdoperator.v0.9.4');
  return {
    ...(csv as CsvObject),
    metadata: {
      ...csv.metadata,
      name,
      namespace: 'ns1',
      uid: `${name}-uid`,
      finalizers: [csvCleanupFinalizer],
      annotations: {
        ...csv.metadata.annotations,
        'olm.operatorGroup': 'og',
        'olm.operatorNamespace': 'ns1',
        'olm.targetNamespaces': 'ns1',
      },
    },
    spec: { ...(csv.spec as object), ...(replaces === undefined ? {} : { replaces }) },
    ...(status === undefined ? {} : { status }),
  };
}

const servedCrds = (): Map<string, KubeObject> =>
  new Map(
    etcdCrds.map((name) => [
      name,
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name },
        spec: { versions: [{ name: 'v1beta2', served: true }] },
        status: {
          conditions: [
            { type: 'Established', status: 'True' },
            { type: 'NamesAccepted', status: 'True' },
          ],
        },
      },
    ]),
  );
const sa: KubeObject = {
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: { name: 'etcd-operator', namespace: 'ns1' },
};
const snapshot = (csvs: CsvObject[], extra: Partial<CsvNamespaceSnapshot> = {}) =>
  csvNamespaceSnapshot(now, csvs, [og], { crds: servedCrds(), serviceAccounts: [sa], ...extra });

t.test('csv ownership - the replacement chain runs both ways and stops at cycles', async (t) => {
  const a = await etcdCsv('a');
  const b = await etcdCsv('b', undefined, 'a');
  const c = await etcdCsv('c', undefined, 'b');
  const other = await etcdCsv('other');
  t.same([...replacementChain(b, [a, b, c, other])].sort(), ['a', 'b', 'c']);
  const loopA = await etcdCsv('a', undefined, 'b');
  t.same([...replacementChain(b, [loopA, b])].sort(), ['a', 'b']);
});

t.test(
  'csv ownership - a CRD owned by another CSV of the namespace fails Pending with OwnerConflict',
  async (t) => {
    const installed = await etcdCsv('etcd-old', { phase: 'Succeeded', reason: 'InstallSucceeded' });
    const pending = await etcdCsv('etcd-other', {
      phase: 'Pending',
      reason: 'RequirementsUnknown',
    });
    t.ok(crdOwnerConflict(pending, [installed, pending]));
    const d = decideCsv(pending, snapshot([installed, pending]));
    t.match(d.status, {
      phase: 'Failed',
      reason: 'OwnerConflict',
      message: 'conflicting CRD owner in namespace',
    });
  },
);

t.test('csv ownership - no conflict within the replacement chain or with a copy', async (t) => {
  const old = await etcdCsv('etcd-old', { phase: 'Replacing', reason: 'BeingReplaced' });
  const next = await etcdCsv(
    'etcd-new',
    { phase: 'Pending', reason: 'RequirementsUnknown' },
    'etcd-old',
  );
  t.notOk(crdOwnerConflict(next, [old, next]));
  t.match(decideCsv(next, snapshot([old, next])).status, { phase: 'InstallReady' });
  const copy = await etcdCsv('copied', { phase: 'Succeeded', reason: 'Copied' });
  copy.metadata.labels = { 'olm.copiedFrom': 'elsewhere' };
  const fresh = await etcdCsv('etcd-fresh', { phase: 'Pending', reason: 'RequirementsUnknown' });
  t.notOk(crdOwnerConflict(fresh, [copy, fresh]));
});

t.test(
  'csv ownership - Failed/OwnerConflict waits while the other owner stays, then starts over',
  async (t) => {
    const installed = await etcdCsv('etcd-old', { phase: 'Succeeded', reason: 'InstallSucceeded' });
    const failed = await etcdCsv('etcd-other', {
      phase: 'Failed',
      reason: 'OwnerConflict',
      message: 'conflicting CRD owner in namespace',
    });
    t.same(decideCsv(failed, snapshot([installed, failed])), { csv: failed, writes: [] });
    const over = decideCsv(failed, snapshot([failed])).status;
    t.match(over, { reason: 'NeedsReinstall' }, 'reinstalled, as upstream');
  },
);

const conversionHook = (crds: string[]) => ({
  type: 'ConversionWebhook',
  generateName: 'cconversion.etcd.database.coreos.com',
  deploymentName: 'etcd-operator',
  containerPort: 443,
  admissionReviewVersions: ['v1'],
  sideEffects: 'None',
  conversionCRDs: crds,
});

t.test(
  'csv ownership - a conversion webhook needs AllNamespaces only, named CRDs, owned ones',
  async (t) => {
    const csv = await etcdCsv('etcd', { phase: 'InstallReady', reason: 'AllRequirementsMet' });
    csv.spec.webhookdefinitions = [conversionHook([etcdCrds[0]!])];
    t.equal(
      conversionWebhookProblem(csv),
      'unable to manage conversion webhook: CSVs with conversion webhooks must support only AllNamespaces',
    );
    const d = decideCsv(csv, snapshot([csv]));
    t.match(d.status, {
      phase: 'Failed',
      reason: 'InstallComponentFailed',
      message:
        'install strategy failed: unable to manage conversion webhook: CSVs with conversion webhooks must support only AllNamespaces',
    });
    t.same(d.writes, [], 'nothing is written');
    const failed = { ...csv, status: d.status };
    t.same(decideCsv(failed, snapshot([failed])).writes, [], 'Failed stays until the CSV changes');

    const allOnly = {
      ...csv,
      spec: {
        ...csv.spec,
        installModes: [
          { type: 'OwnNamespace', supported: false },
          { type: 'SingleNamespace', supported: false },
          { type: 'MultiNamespace', supported: false },
          { type: 'AllNamespaces', supported: true },
        ],
      },
    };
    t.equal(conversionWebhookProblem(allOnly), undefined);
    allOnly.spec.webhookdefinitions = [conversionHook([])];
    t.match(conversionWebhookProblem(allOnly), /must have at least one CRD specified/);
    allOnly.spec.webhookdefinitions = [conversionHook(['widgets.example.com'])];
    t.equal(conversionWebhookProblem(allOnly), 'csv etcd does not own CRD widgets.example.com');
  },
);

t.test(
  'csv ownership - deleting a CSV nothing replaces resets its conversion CRDs to None',
  async (t) => {
    const csv = await etcdCsv('etcd', { phase: 'Succeeded', reason: 'InstallSucceeded' });
    csv.spec.webhookdefinitions = [conversionHook([etcdCrds[0]!])];
    csv.metadata.deletionTimestamp = now.toISOString();
    const crds = servedCrds();
    const crd = crds.get(etcdCrds[0]!)!;
    crds.set(etcdCrds[0]!, {
      ...crd,
      spec: {
        ...(crd['spec'] as object),
        conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'] } },
      },
    });
    const d = decideCsv(csv, snapshot([csv], { crds }));
    t.match(d.writes, [
      {
        op: 'update',
        object: { kind: 'CustomResourceDefinition', spec: { conversion: { strategy: 'None' } } },
      },
      { op: 'update', object: { kind: 'ClusterServiceVersion' } },
    ]);
    const crdWrite = d.writes[0];
    t.same(
      crdWrite?.op === 'update'
        ? (crdWrite.object['spec'] as { conversion: unknown }).conversion
        : 0,
      { strategy: 'None' },
      'the webhook settings go',
    );
    const next = await etcdCsv('etcd-next', undefined, 'etcd');
    const kept = decideCsv(csv, snapshot([csv, next], { crds }));
    t.notOk(
      kept.writes.some((w) => w.op === 'update' && w.object.kind === 'CustomResourceDefinition'),
      'an upgrade keeps converting',
    );
  },
);
