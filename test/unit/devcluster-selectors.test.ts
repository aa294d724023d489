import t from 'tap';
import {
  labelSelectorFromObject,
  matchesFieldSelector,
  matchesLabelSelector,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
} from '../../shared/kube/selectors.js';

void t.test('selectors - parses every operator of the string form', (t) => {
  const selector = parseLabelSelector('a=b,c!=d,e in (x, y),f notin (z),g,!h');
  t.same(
    selector.map((r) => [r.key, r.operator, r.values]),
    [
      ['a', 'Equals', ['b']],
      ['c', 'NotEquals', ['d']],
      ['e', 'In', ['x', 'y']],
      ['f', 'NotIn', ['z']],
      ['g', 'Exists', []],
      ['h', 'DoesNotExist', []],
    ],
  );
  t.end();
});

void t.test('selectors - matches labels against all requirements', (t) => {
  const selector = parseLabelSelector('a=b,c!=d,e in (x,y),f notin (z),g,!h');
  t.ok(matchesLabelSelector(selector, { a: 'b', c: 'q', e: 'y', f: 'w', g: '' }));
  t.notOk(
    matchesLabelSelector(selector, { a: 'b', c: 'q', e: 'y', f: 'w', g: '', h: '1' }),
    '!h fails when h is present',
  );
  t.notOk(matchesLabelSelector(selector, { a: 'b', c: 'd', e: 'y', g: '' }), 'c!=d fails');
  t.notOk(matchesLabelSelector(selector, { a: 'b', e: 'q', g: '' }), 'e in (x,y) fails');
  t.end();
});

void t.test('selectors - an empty selector matches everything', (t) => {
  t.ok(matchesLabelSelector(parseLabelSelector(''), undefined));
  t.end();
});

void t.test('selectors - a malformed selector throws SelectorError', (t) => {
  t.throws(() => parseLabelSelector('a in ('), SelectorError);
  t.throws(() => parseLabelSelector('bad key=1'), SelectorError);
  t.end();
});

void t.test('selectors - metav1.LabelSelector objects convert and match', (t) => {
  const selector = labelSelectorFromObject({
    matchLabels: { app: 'x' },
    matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }],
  });
  t.ok(matchesLabelSelector(selector, { app: 'x', tier: 'a' }));
  t.notOk(matchesLabelSelector(selector, { app: 'x', tier: 'b' }));
  t.throws(
    () => labelSelectorFromObject({ matchExpressions: [{ key: 'k', operator: 'Near' }] }),
    SelectorError,
  );
  t.end();
});

void t.test('selectors - field selectors match with = and !=', (t) => {
  const selector = parseFieldSelector('metadata.name=x,involvedObject.kind!=Pod');
  const fields: Record<string, string> = {
    'metadata.name': 'x',
    'involvedObject.kind': 'ConfigMap',
  };
  t.ok(matchesFieldSelector(selector, (f) => fields[f]));
  t.notOk(matchesFieldSelector(selector, (f) => ({ ...fields, 'involvedObject.kind': 'Pod' })[f]));
  t.end();
});
