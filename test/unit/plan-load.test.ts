// The plan function's load keeps the decision it made on the mirror when it only writes statuses
// on a mirror that shows the function's own writes and its settled plans' CSVs, or when the
// API's objects are the very ones the mirror holds: same names and resourceVersions, same CSVs.
import t from 'tap';
import { csvsBesidePlans, mirrorDecisionStands, sameInputs } from '../../functions/plan/load.js';
import type { InstallPlan, Subscription } from '../../shared/api/index.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import { OwnWrites } from '../../shared/kube/own-writes.js';

const sub = (name: string, resourceVersion: string): Subscription => ({
  metadata: { name, namespace: 'ns', resourceVersion },
  spec: { name, source: 'c', sourceNamespace: 'olm' },
});

const plan = (name: string, resourceVersion: string): InstallPlan => ({
  metadata: { name, namespace: 'ns', resourceVersion },
  spec: { clusterServiceVersionNames: [], approval: 'Automatic', approved: true },
});

const inputs = (
  subscriptions: Subscription[],
  installPlans: InstallPlan[],
  csvs: string[],
): Parameters<typeof sameInputs>[0] => ({ subscriptions, installPlans, csvs: new Set(csvs) });

void t.test('plan load - the same objects in another order are the same inputs', (t) => {
  t.ok(
    sameInputs(
      inputs([sub('a', '1'), sub('b', '2')], [plan('p', '3')], ['x.v1']),
      inputs([sub('b', '2'), sub('a', '1')], [plan('p', '3')], ['x.v1']),
    ),
  );
  t.end();
});

void t.test('plan load - a newer resourceVersion of a Subscription or plan differs', (t) => {
  const mirror = inputs([sub('a', '1')], [plan('p', '3')], []);
  t.notOk(sameInputs(mirror, inputs([sub('a', '4')], [plan('p', '3')], [])), 'Subscription');
  t.notOk(sameInputs(mirror, inputs([sub('a', '1')], [plan('p', '5')], [])), 'InstallPlan');
  t.end();
});

void t.test('plan load - an object or CSV only one side has differs', (t) => {
  const mirror = inputs([sub('a', '1')], [], ['x.v1']);
  t.notOk(sameInputs(mirror, inputs([sub('a', '1')], [plan('p', '3')], ['x.v1'])), 'a new plan');
  t.notOk(sameInputs(mirror, inputs([sub('a', '1')], [], ['x.v1', 'y.v1'])), 'a new CSV');
  t.notOk(sameInputs(mirror, inputs([sub('a', '1')], [], ['y.v1'])), 'another CSV');
  t.notOk(sameInputs(mirror, inputs([], [], ['x.v1'])), 'a Subscription gone');
  t.end();
});

const settledPlan = (name: string, phase: string, csvs: string[]): InstallPlan => ({
  ...plan(name, '3'),
  spec: { clusterServiceVersionNames: csvs, approval: 'Automatic', approved: true },
  status: { phase, catalogSources: [] } as unknown as InstallPlan['status'],
});

const following = (name: string, planName: string, currentCSV: string): Subscription => ({
  ...sub(name, '1'),
  status: {
    lastUpdated: '2026-01-01T00:00:00Z',
    currentCSV,
    installPlanRef: { name: planName, namespace: 'ns' },
  },
});

void t.test('plan load - a Complete or Failed plan must have its CSVs beside it', (t) => {
  const complete = settledPlan('p', 'Complete', ['x.v1']);
  t.ok(csvsBesidePlans(inputs([], [complete], ['x.v1'])), 'its CSV is mirrored');
  t.notOk(csvsBesidePlans(inputs([], [complete], [])), 'its CSV lags: read the API');
  t.notOk(csvsBesidePlans(inputs([], [settledPlan('p', 'Failed', ['x.v1'])], [])), 'Failed');
  t.ok(csvsBesidePlans(inputs([], [settledPlan('p', 'Installing', ['x.v1'])], [])), 'in flight');
  t.notOk(
    csvsBesidePlans(inputs([following('a', 'p', 'y.v1')], [complete], ['x.v1'])),
    'the current CSV of a Subscription following it, too',
  );
  t.end();
});

void t.test(
  'plan load - a decision on the mirror stands for status writes and plan creates',
  (t) => {
    const where = { cluster: 'c1', namespace: 'ns' };
    const mirror = inputs([sub('a', '7')], [plan('p', '3')], []);
    const status: Write = {
      op: 'updateStatus',
      object: { ...sub('a', '7'), apiVersion: 'v1', kind: 'Subscription' } as unknown as KubeObject,
    };
    const create: Write = {
      op: 'create',
      object: { ...plan('q', '1'), apiVersion: 'v1', kind: 'InstallPlan' } as unknown as KubeObject,
    };
    const otherCreate: Write = {
      op: 'create',
      object: { ...sub('b', '1'), apiVersion: 'v1', kind: 'Subscription' } as unknown as KubeObject,
    };
    const del: Write = {
      op: 'delete',
      ref: { apiVersion: 'v1', kind: 'InstallPlan', namespace: 'ns', name: 'p' },
    };
    const ledger = new OwnWrites();
    t.ok(mirrorDecisionStands(ledger, where, mirror, [status]), 'status writes on a fresh mirror');
    t.ok(
      mirrorDecisionStands(ledger, where, mirror, [status, create]),
      'a plan created (named after its bundles: a second create finds it)',
    );
    t.notOk(mirrorDecisionStands(ledger, where, mirror, [otherCreate]), 'anything else created');
    t.notOk(mirrorDecisionStands(ledger, where, mirror, [del]), 'a plan deleted');
    ledger.wrote('c1', status, '8');
    t.notOk(mirrorDecisionStands(ledger, where, mirror, [status]), 'the mirror lacks our write');
    t.notOk(mirrorDecisionStands(ledger, where, mirror, [create]), 'nor may a plan be created');
    const caughtUp = inputs([sub('a', '8')], [plan('p', '3')], []);
    t.ok(mirrorDecisionStands(ledger, where, caughtUp, [status]), 'once it shows it');
    const lagging = inputs([sub('a', '8')], [settledPlan('p', 'Complete', ['x.v1'])], []);
    t.notOk(mirrorDecisionStands(ledger, where, lagging, [status]), 'CSVs lag a Complete plan');
    t.end();
  },
);
