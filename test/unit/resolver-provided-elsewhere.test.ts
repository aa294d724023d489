// A Subscription to a package an operator installed elsewhere already serves to the namespace
// (a copied CSV is there) is refused with an explanation, never left silent; the others resolve.
import t from 'tap';
import { buildCatalogFromTexts } from '../../shared/catalog/index.js';
import {
  resolveNamespace,
  withoutProvidedElsewhere,
  type Resolution,
} from '../../shared/resolver/index.js';

const gvk = { group: 'example.com', version: 'v1', kind: 'Widget' };
const bundle = (pkg: string, properties: object[] = []) => [
  { schema: 'olm.package', name: pkg, defaultChannel: 'stable' },
  { schema: 'olm.channel', package: pkg, name: 'stable', entries: [{ name: `${pkg}.v1` }] },
  {
    schema: 'olm.bundle',
    package: pkg,
    name: `${pkg}.v1`,
    image: `example.com/${pkg}:v1`,
    properties: [
      { type: 'olm.package', value: { packageName: pkg, version: '1.0.0' } },
      ...properties,
    ],
  },
];
const index = buildCatalogFromTexts({
  'catalog.json': [
    ...bundle('widgets', [{ type: 'olm.gvk', value: gvk }]),
    ...bundle('app', [{ type: 'olm.gvk.required', value: gvk }]),
    ...bundle('other'),
  ]
    .map((o) => JSON.stringify(o))
    .join('\n'),
}).index;

const resolve = (): Resolution =>
  resolveNamespace({
    namespace: 'team-x',
    subscriptions: ['app', 'other'].map((name) => ({
      name,
      package: name,
      channel: null,
      source: { name: 'cat', namespace: 'olm' },
      startingCSV: null,
      installedCSV: null,
    })),
    installed: [],
    operatorGroups: null,
    catalogs: [{ name: 'cat', namespace: 'olm', priority: 0, index }],
  });

void t.test(
  'resolver - regression: a Subscription to a package already served by a copied CSV fails with the reason instead of staying silent',
  (t) => {
    const r = withoutProvidedElsewhere(resolve(), 'team-x', [
      { name: 'app.v1', package: 'app', copiedFrom: 'operators' },
    ]);
    t.equal(r.status, 'unsatisfiable');
    t.same(
      r.bundles.map((b) => `${b.subscription ?? '-'}:${b.name}`),
      ['other:other.v1'],
      'the unrelated Subscription still installs; the dependency only app needed is dropped',
    );
    t.equal(r.problems.length, 1);
    t.equal(r.problems[0]?.subscription, 'app');
    t.equal(r.problems[0]?.code, 'ConstraintsNotSatisfiable');
    t.match(
      r.problems[0]?.message,
      /app\.v1 installed in namespace operators already serves namespace team-x/,
    );
    t.end();
  },
);

void t.test('resolver - a copy of another package, or no copy, changes nothing', (t) => {
  const plain = resolve();
  t.same(
    plain.bundles.map((b) => b.name).sort(),
    ['app.v1', 'other.v1', 'widgets.v1'],
    'without copies app installs with its dependency',
  );
  t.equal(
    withoutProvidedElsewhere(plain, 'team-x', [
      { name: 'unrelated.v1', package: 'unrelated', copiedFrom: 'operators' },
    ]),
    plain,
  );
  t.end();
});
