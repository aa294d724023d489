// The plan function's load keeps the decision it made on the mirror only when the API's objects
// are the very ones the mirror holds: same names and resourceVersions, same CSVs.
import t from 'tap';
import { sameInputs } from '../../functions/plan/load.js';
import type { InstallPlan, Subscription } from '../../shared/api/index.js';

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
