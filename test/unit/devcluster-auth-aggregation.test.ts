// ClusterRole aggregation, as the aggregation controller computes it.
import t from 'tap';
import type { JsonObject } from '../../shared/kube/json.js';
import { aggregatedRules } from '../../devcluster/auth/index.js';
import { clusterRole } from './devcluster-auth-fixtures.js';

function aggregator(
  name: string,
  selectors: JsonObject[],
  labels: Record<string, string> = {},
): JsonObject {
  return { ...clusterRole(name, [], labels), aggregationRule: { clusterRoleSelectors: selectors } };
}

const readPods = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
const readSecrets = { verbs: ['get'], apiGroups: [''], resources: ['secrets'] };
const readNodes = { verbs: ['get'], apiGroups: [''], resources: ['nodes'] };

void t.test('aggregation - roles without aggregationRule are not in the result', (t) => {
  t.same([...aggregatedRules([clusterRole('plain', [readPods])]).keys()], []);
  t.end();
});

void t.test('aggregation - matchLabels selects labelled roles, sorted by name', (t) => {
  const result = aggregatedRules([
    aggregator('monitoring', [{ matchLabels: { 'example.com/aggregate-to-monitoring': 'true' } }]),
    clusterRole('z-secrets', [readSecrets], { 'example.com/aggregate-to-monitoring': 'true' }),
    clusterRole('a-pods', [readPods], { 'example.com/aggregate-to-monitoring': 'true' }),
    clusterRole('unlabelled', [readNodes]),
  ]);
  t.same(result.get('monitoring'), [readPods, readSecrets]);
  t.end();
});

void t.test('aggregation - an equal rule from several roles appears once', (t) => {
  const result = aggregatedRules([
    aggregator('agg', [{ matchLabels: { a: 'true' } }]),
    clusterRole('one', [readPods], { a: 'true' }),
    clusterRole('two', [readPods, readSecrets], { a: 'true' }),
  ]);
  t.same(result.get('agg'), [readPods, readSecrets]);
  t.end();
});

void t.test('aggregation - rules differing only in list order are kept apart', (t) => {
  const getList = { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] };
  const listGet = { verbs: ['list', 'get'], apiGroups: [''], resources: ['pods'] };
  const result = aggregatedRules([
    aggregator('agg', [{ matchLabels: { a: 'true' } }]),
    clusterRole('one', [getList], { a: 'true' }),
    clusterRole('two', [listGet], { a: 'true' }),
  ]);
  t.same(result.get('agg'), [getList, listGet]);
  t.end();
});

void t.test('aggregation - selectors contribute in their order', (t) => {
  const result = aggregatedRules([
    aggregator('agg', [{ matchLabels: { second: 'true' } }, { matchLabels: { first: 'true' } }]),
    clusterRole('a', [readPods], { first: 'true' }),
    clusterRole('b', [readSecrets], { second: 'true' }),
  ]);
  t.same(result.get('agg'), [readSecrets, readPods]);
  t.end();
});

void t.test('aggregation - matchExpressions In, NotIn, Exists and DoesNotExist', (t) => {
  const roles = [
    clusterRole('a', [readPods], { tier: 'gold', team: 'x' }),
    clusterRole('b', [readSecrets], { tier: 'silver' }),
    clusterRole('c', [readNodes], { tier: 'bronze', team: 'y' }),
  ];
  const rulesFor = (expression: JsonObject) =>
    aggregatedRules([aggregator('agg', [{ matchExpressions: [expression] }]), ...roles]).get('agg');
  t.same(rulesFor({ key: 'tier', operator: 'In', values: ['gold', 'silver'] }), [
    readPods,
    readSecrets,
  ]);
  t.same(rulesFor({ key: 'tier', operator: 'NotIn', values: ['gold'] }), [readSecrets, readNodes]);
  t.same(rulesFor({ key: 'team', operator: 'Exists' }), [readPods, readNodes]);
  t.same(rulesFor({ key: 'team', operator: 'DoesNotExist' }), [readSecrets]);
  t.end();
});

void t.test(
  'aggregation - matchLabels and matchExpressions of one selector must both hold',
  (t) => {
    const result = aggregatedRules([
      aggregator('agg', [
        { matchLabels: { tier: 'gold' }, matchExpressions: [{ key: 'team', operator: 'Exists' }] },
      ]),
      clusterRole('a', [readPods], { tier: 'gold', team: 'x' }),
      clusterRole('b', [readSecrets], { tier: 'gold' }),
    ]);
    t.same(result.get('agg'), [readPods]);
    t.end();
  },
);

void t.test('aggregation - an empty selector selects every other role', (t) => {
  const result = aggregatedRules([
    aggregator('agg', [{}]),
    clusterRole('a', [readPods]),
    clusterRole('b', [readSecrets]),
  ]);
  t.same(result.get('agg'), [readPods, readSecrets]);
  t.end();
});

void t.test('aggregation - a role never aggregates itself', (t) => {
  const self = {
    ...aggregator('agg', [{ matchLabels: { a: 'true' } }], { a: 'true' }),
    rules: [readNodes],
  };
  t.same(aggregatedRules([self, clusterRole('x', [readPods], { a: 'true' })]).get('agg'), [
    readPods,
  ]);
  t.end();
});

void t.test('aggregation - no matching role yields an empty rule list', (t) => {
  t.same(aggregatedRules([aggregator('agg', [{ matchLabels: { none: 'true' } }])]).get('agg'), []);
  t.end();
});

void t.test('aggregation - an invalid selector leaves the role out', (t) => {
  const result = aggregatedRules([
    aggregator('agg', [{ matchExpressions: [{ key: 'a', operator: 'Near', values: ['x'] }] }]),
    clusterRole('x', [readPods], { a: 'x' }),
  ]);
  t.equal(result.has('agg'), false);
  t.end();
});

void t.test('aggregation - nested aggregation converges (view into edit into admin)', (t) => {
  const result = aggregatedRules([
    aggregator('admin', [{ matchLabels: { 'to-admin': 'true' } }]),
    aggregator('edit', [{ matchLabels: { 'to-edit': 'true' } }], { 'to-admin': 'true' }),
    aggregator('view', [{ matchLabels: { 'to-view': 'true' } }], { 'to-edit': 'true' }),
    clusterRole('admin-extra', [readNodes], { 'to-admin': 'true' }),
    clusterRole('edit-extra', [readSecrets], { 'to-edit': 'true' }),
    clusterRole('view-extra', [readPods], { 'to-view': 'true' }),
  ]);
  t.same(result.get('view'), [readPods]);
  t.same(result.get('edit'), [readSecrets, readPods]);
  t.same(result.get('admin'), [readNodes, readSecrets, readPods]);
  t.end();
});
