// Irregular catalogs as small in-test snippets: each gives a specific warning and keeps what
// can still be used, or fails with an error that says where.
import t from 'tap';
import {
  buildCatalogFromTexts,
  CatalogMalformedError,
  type CatalogWarning,
} from '../../shared/catalog/index.js';

type Entry = { name: string; replaces?: string; skips?: string[]; skipRange?: string };

function pkg(name: string, defaultChannel?: string): object {
  return {
    schema: 'olm.package',
    name,
    ...(defaultChannel === undefined ? {} : { defaultChannel }),
  };
}

function channel(pkgName: string, name: string, entries: Entry[]): object {
  return { schema: 'olm.channel', package: pkgName, name, entries };
}

// Each bundle carries a minimal olm.csv.metadata so that only the irregularity under test warns.
const csvMetadata = {
  type: 'olm.csv.metadata',
  value: { installModes: [{ type: 'AllNamespaces', supported: true }] },
};

function bundle(
  pkgName: string,
  name: string,
  version: string | null,
  extra: object[] = [],
): object {
  const own =
    version === null ? [] : [{ type: 'olm.package', value: { packageName: pkgName, version } }];
  const properties = [...own, csvMetadata, ...extra];
  return { schema: 'olm.bundle', package: pkgName, name, image: `example.com/${name}`, properties };
}

function lines(...objects: object[]): string {
  return objects.map((o) => JSON.stringify(o)).join('\n');
}

function build(...objects: object[]) {
  return buildCatalogFromTexts({ 'catalog.json': lines(...objects) });
}

function codes(warnings: readonly CatalogWarning[]): string[] {
  return warnings.map((w) => w.code);
}

t.test('catalog messy - a version that is not semver is kept raw with a warning', (t) => {
  const { index, warnings } = build(
    pkg('a', 'stable'),
    channel('a', 'stable', [{ name: 'a.v1' }]),
    bundle('a', 'a.v1', '1.0'),
  );
  t.same(codes(warnings), ['bundle-version-invalid']);
  t.match(warnings[0], { package: 'a', bundle: 'a.v1', origin: 'catalog.json:3' });
  t.equal(index.getBundle('a', 'a.v1')?.version, '1.0');
  t.equal(index.getBundle('a', 'a.v1')?.semver, null);
  t.end();
});

t.test('catalog messy - a dangling replaces is kept as an edge with a warning', (t) => {
  const { index, warnings } = build(
    pkg('a', 'stable'),
    channel('a', 'stable', [{ name: 'a.v2', replaces: 'a.v1' }]),
    bundle('a', 'a.v2', '2.0.0'),
  );
  t.same(codes(warnings), ['replaces-not-in-channel']);
  t.match(
    warnings[0]?.message,
    /"a.v2" replaces "a.v1", which is not an entry of the channel nor a bundle of the package/,
  );
  t.equal(index.getChannel('a', 'stable')?.head, 'a.v2');
  t.same(
    index.upgradesFrom('a', 'stable', { name: 'a.v1' }).map((c) => c.bundle.name),
    ['a.v2'],
    'an install of a.v1 still upgrades',
  );
  t.end();
});

t.test('catalog messy - a bundle without CSV has unknown install modes', (t) => {
  const { index, warnings } = buildCatalogFromTexts({
    'catalog.json': lines(pkg('a', 'stable'), channel('a', 'stable', [{ name: 'a.v1' }]), {
      schema: 'olm.bundle',
      package: 'a',
      name: 'a.v1',
      image: 'example.com/a:1',
      properties: [{ type: 'olm.package', value: { packageName: 'a', version: '1.0.0' } }],
    }),
  });
  t.same(codes(warnings), ['bundle-csv-missing']);
  t.equal(index.getBundle('a', 'a.v1')?.installModes, null);
  t.end();
});

t.test('catalog messy - a duplicate bundle name keeps the first declaration', (t) => {
  const { index, warnings } = build(
    pkg('a', 'stable'),
    channel('a', 'stable', [{ name: 'a.v1' }]),
    bundle('a', 'a.v1', '1.0.0'),
    bundle('a', 'a.v1', '1.0.1'),
  );
  t.same(codes(warnings), ['bundle-duplicate']);
  t.match(warnings[0]?.message, /first at catalog.json:3/);
  t.equal(index.getBundle('a', 'a.v1')?.version, '1.0.0');
  t.end();
});

t.test('catalog messy - two heads: the highest version is the head', (t) => {
  const { index, warnings } = build(
    pkg('a', 'stable'),
    channel('a', 'stable', [{ name: 'a.v1' }, { name: 'a.v2' }]),
    bundle('a', 'a.v1', '1.0.0'),
    bundle('a', 'a.v2', '2.0.0'),
  );
  // a.v1 is also off the chain from the chosen head.
  t.same(codes(warnings), ['channel-multiple-heads', 'channel-stranded-entries']);
  t.match(warnings[0]?.message, /multiple channel heads found in graph: a.v1, a.v2/);
  t.equal(index.getChannel('a', 'stable')?.head, 'a.v2');
  t.end();
});

t.test('catalog messy - no head: the channel is kept without one', (t) => {
  const { index, warnings } = build(
    pkg('a', 'stable'),
    channel('a', 'stable', [
      { name: 'a.v1', replaces: 'a.v2' },
      { name: 'a.v2', replaces: 'a.v1' },
    ]),
    bundle('a', 'a.v1', '1.0.0'),
    bundle('a', 'a.v2', '2.0.0'),
  );
  t.same(codes(warnings), ['channel-no-head']);
  t.match(warnings[0]?.message, /no channel head found in graph/);
  t.equal(index.getChannel('a', 'stable')?.head, null);
  t.equal(index.channelHead('a', 'stable'), undefined);
  t.end();
});

t.test('catalog messy - a bundle in no channel is dropped', (t) => {
  const { index, warnings } = build(
    pkg('a', 'stable'),
    channel('a', 'stable', [{ name: 'a.v1' }]),
    bundle('a', 'a.v1', '1.0.0'),
    bundle('a', 'a.v0', '0.1.0'),
  );
  t.same(codes(warnings), ['bundle-not-in-channel']);
  t.match(warnings[0], { package: 'a', bundle: 'a.v0', origin: 'catalog.json:4' });
  t.equal(index.getBundle('a', 'a.v0'), undefined);
  t.equal(index.bundles.length, 1);
  t.end();
});

t.test('catalog messy - a bundle without olm.package property is dropped with its entry', (t) => {
  const { index, warnings } = build(
    pkg('a', 'stable'),
    channel('a', 'stable', [{ name: 'a.v1' }, { name: 'a.v2', replaces: 'a.v1' }]),
    bundle('a', 'a.v1', '1.0.0'),
    bundle('a', 'a.v2', null),
  );
  t.same(codes(warnings), ['bundle-package-property-missing', 'channel-entry-unknown-bundle']);
  t.same(
    index.getChannel('a', 'stable')?.entries.map((e) => e.name),
    ['a.v1'],
  );
  t.end();
});

t.test('catalog messy - entries neither on the chain nor skipped are reported stranded', (t) => {
  const { warnings } = build(
    pkg('a', 'stable'),
    channel('a', 'stable', [
      { name: 'a.v1' },
      { name: 'a.v2', replaces: 'a.v1' },
      { name: 'a.v3', replaces: 'a.v2', skips: ['a.v1'] },
    ]),
    bundle('a', 'a.v1', '1.0.0'),
    bundle('a', 'a.v2', '2.0.0'),
    bundle('a', 'a.v3', '3.0.0'),
  );
  // a.v1 is skipped, so it is not stranded even though the chain does not reach it.
  t.same(codes(warnings), []);
  // As in real data: a.v3 skips the very bundle it replaces, so the chain stops at a.v3 and
  // a.v1 is stranded.
  const stranded = build(
    pkg('a', 'stable'),
    channel('a', 'stable', [
      { name: 'a.v1' },
      { name: 'a.v2', replaces: 'a.v1' },
      { name: 'a.v3', replaces: 'a.v2', skips: ['a.v2'] },
    ]),
    bundle('a', 'a.v1', '1.0.0'),
    bundle('a', 'a.v2', '2.0.0'),
    bundle('a', 'a.v3', '3.0.0'),
  );
  t.same(codes(stranded.warnings), ['channel-stranded-entries']);
  t.match(stranded.warnings[0]?.message, /stranded bundles: a.v1 /);
  t.same(
    stranded.index.upgradesFrom('a', 'stable', { name: 'a.v1' }).map((c) => c.bundle.name),
    ['a.v2'],
    'stranded entries keep their edges',
  );
  t.end();
});

t.test('catalog messy - an invalid skipRange yields no edges and a warning', (t) => {
  const { index, warnings } = build(
    pkg('a', 'stable'),
    channel('a', 'stable', [
      { name: 'a.v1' },
      { name: 'a.v2', replaces: 'a.v1', skipRange: 'not a range' },
    ]),
    bundle('a', 'a.v1', '1.0.0'),
    bundle('a', 'a.v2', '2.0.0'),
  );
  t.same(codes(warnings), ['skip-range-invalid']);
  t.same(
    index.getChannel('a', 'stable')?.edges.map((e) => e.via),
    ['replaces'],
  );
  t.end();
});

t.test('catalog messy - an unknown package, default channel and schema are reported', (t) => {
  const { index, warnings } = build(
    pkg('a', 'missing'),
    channel('a', 'stable', [{ name: 'a.v1' }]),
    bundle('a', 'a.v1', '1.0.0'),
    channel('ghost', 'stable', [{ name: 'g.v1' }]),
    { schema: 'example.com/custom', package: 'a', anything: true },
  );
  t.same(codes(warnings).sort(), ['default-channel-missing', 'package-unknown', 'unknown-schema']);
  t.equal(index.getPackage('a')?.defaultChannel, null);
  t.equal(index.getPackage('ghost'), undefined);
  t.end();
});

t.test('catalog messy - gvk properties become provided and required APIs', (t) => {
  const { index } = build(
    pkg('a', 'stable'),
    channel('a', 'stable', [{ name: 'a.v1' }]),
    bundle('a', 'a.v1', '1.0.0', [
      { type: 'olm.gvk', value: { group: 'x.io', version: 'v1', kind: 'Thing' } },
      { type: 'olm.gvk.required', value: { group: 'y.io', version: 'v1', kind: 'Other' } },
      { type: 'olm.package.required', value: { packageName: 'b', versionRange: '>=1.0.0' } },
      { type: 'olm.maxOpenShiftVersion', value: '4.14' },
      { type: 'olm.gvk', value: { group: 'x.io', kind: 'Broken' } },
    ]),
  );
  const b = index.getBundle('a', 'a.v1');
  t.same(b?.providedApis, [{ group: 'x.io', version: 'v1', kind: 'Thing', plural: null }]);
  t.same(b?.requiredApis, [{ group: 'y.io', version: 'v1', kind: 'Other', plural: null }]);
  t.same(b?.dependencies, [
    { type: 'olm.gvk', group: 'y.io', version: 'v1', kind: 'Other' },
    { type: 'olm.package', packageName: 'b', versionRange: '>=1.0.0' },
  ]);
  t.same(b?.properties, [{ type: 'olm.maxOpenShiftVersion', value: '4.14' }]);
  t.same(
    index.providersOf('x.io', 'v1', 'Thing').map((p) => p.name),
    ['a.v1'],
  );
  t.end();
});

t.test('catalog messy - olm.deprecations mark package, channel and bundle', (t) => {
  const { index, warnings } = build(
    pkg('a', 'stable'),
    channel('a', 'stable', [{ name: 'a.v1' }]),
    bundle('a', 'a.v1', '1.0.0'),
    {
      schema: 'olm.deprecations',
      package: 'a',
      entries: [
        { reference: { schema: 'olm.package' }, message: 'package gone' },
        { reference: { schema: 'olm.channel', name: 'stable' }, message: 'channel gone' },
        { reference: { schema: 'olm.bundle', name: 'a.v1' }, message: 'bundle gone' },
        { reference: { schema: 'olm.bundle', name: 'a.v9' }, message: '?' },
      ],
    },
  );
  t.same(codes(warnings), ['deprecation-unknown-reference']);
  t.equal(index.getPackage('a')?.deprecation, 'package gone');
  t.equal(index.getChannel('a', 'stable')?.deprecation, 'channel gone');
  t.equal(index.getBundle('a', 'a.v1')?.deprecation, 'bundle gone');
  t.end();
});

t.test('catalog messy - a malformed JSON line fails with file and line', (t) => {
  const text = `${lines(pkg('a', 'stable'))}\n{"schema":"olm.channel","package":"a",\n${lines(bundle('a', 'a.v1', '1.0.0'))}`;
  const error = t.throws(() => buildCatalogFromTexts({ 'a/catalog.json': text }));
  t.type(error, CatalogMalformedError);
  t.match(error, { file: 'a/catalog.json', line: 2, code: 'catalog-malformed', retryable: false });
  t.match((error as Error).message, /^a\/catalog.json:2: /);
  t.end();
});

t.test('catalog messy - YAML documents load like JSON', (t) => {
  const yaml = [
    'schema: olm.package',
    'name: a',
    'defaultChannel: stable',
    '---',
    'schema: olm.channel',
    'package: a',
    'name: stable',
    'entries:',
    '  - name: a.v1',
    '---',
    'schema: olm.bundle',
    'package: a',
    'name: a.v1',
    'image: example.com/a:1',
    'properties:',
    '  - type: olm.package',
    '    value: {packageName: a, version: 1.0.0}',
    '  - type: olm.csv.metadata',
    '    value: {installModes: [{type: AllNamespaces, supported: true}]}',
  ].join('\n');
  const { index, warnings } = buildCatalogFromTexts({ 'catalog.yaml': yaml });
  t.same(warnings, []);
  t.equal(index.channelHead('a', 'stable')?.version, '1.0.0');
  t.end();
});

t.test('catalog messy - bad YAML fails with file and line', (t) => {
  const error = t.throws(() =>
    buildCatalogFromTexts({ 'catalog.yaml': 'schema: olm.package\nname: [a\n' }),
  );
  t.type(error, CatalogMalformedError);
  t.equal((error as CatalogMalformedError).file, 'catalog.yaml');
  t.end();
});

t.test('catalog messy - a byte-order mark before the first object is ignored', (t) => {
  const { index, warnings } = buildCatalogFromTexts({
    'catalog.json': `\ufeff${lines(pkg('a', 'stable'), channel('a', 'stable', [{ name: 'a.v1' }]), bundle('a', 'a.v1', '1.0.0'))}`,
  });
  t.same(warnings, []);
  t.equal(index.bundles.length, 1);
  t.end();
});

t.test('catalog messy - pretty-printed and concatenated JSON objects load', (t) => {
  const text = [
    JSON.stringify(pkg('a', 'stable'), null, 2),
    JSON.stringify(channel('a', 'stable', [{ name: 'a.v1' }])) +
      JSON.stringify(bundle('a', 'a.v1', '1.0.0')),
  ].join('\n');
  const { index, warnings } = buildCatalogFromTexts({ 'catalog.json': text });
  t.same(warnings, []);
  t.equal(index.bundles.length, 1);
  t.end();
});

t.test('catalog messy - packages may reuse a CSV name; lookups keep them apart', (t) => {
  const { index, warnings } = build(
    pkg('a', 'stable'),
    pkg('b', 'stable'),
    channel('a', 'stable', [{ name: 'shared.v1' }]),
    channel('b', 'stable', [{ name: 'shared.v1' }]),
    bundle('a', 'shared.v1', '1.0.0'),
    bundle('b', 'shared.v1', '2.0.0'),
  );
  t.same(warnings, []);
  t.same(
    index.bundlesNamed('shared.v1').map((b) => [b.package, b.version]),
    [
      ['a', '1.0.0'],
      ['b', '2.0.0'],
    ],
  );
  t.equal(index.getBundle('b', 'shared.v1')?.version, '2.0.0');
  t.end();
});

t.test('catalog messy - the index cannot be changed by its users', (t) => {
  const { index } = build(
    pkg('a', 'stable'),
    channel('a', 'stable', [{ name: 'a.v1' }]),
    bundle('a', 'a.v1', '1.0.0'),
  );
  const b = index.getBundle('a', 'a.v1') as { version: string };
  t.throws(() => {
    b.version = '9.9.9';
  }, TypeError);
  t.throws(() => (index.bundles as unknown[]).push(b), TypeError);
  t.end();
});

t.test('catalog messy - the channel graph, not the CSV, says what a bundle replaces', (t) => {
  const { index } = build(
    pkg('a', 'stable'),
    channel('a', 'stable', [{ name: 'a.v1' }, { name: 'a.v2', replaces: 'a.v1' }]),
    bundle('a', 'a.v1', '1.0.0'),
    // The CSV (here its metadata) names an older predecessor than the channel does.
    bundle('a', 'a.v2', '2.0.0', [
      { type: 'olm.csv.metadata', value: { installModes: [], replaces: 'a.v0' } },
    ]),
  );
  t.equal(index.getBundle('a', 'a.v2')?.replaces, 'a.v1');
  t.equal(index.getBundle('a', 'a.v1')?.replaces, null);
  t.end();
});

function objectProperty(text: string): object {
  return {
    type: 'olm.bundle.object',
    value: { data: Buffer.from(text, 'utf8').toString('base64') },
  };
}

function bareBundle(properties: object[]): object {
  return {
    schema: 'olm.bundle',
    package: 'a',
    name: 'a.v1',
    image: 'example.com/a:1',
    properties: [
      { type: 'olm.package', value: { packageName: 'a', version: '1.0.0' } },
      ...properties,
    ],
  };
}

const csvSpec = {
  installModes: [
    { type: 'OwnNamespace', supported: true },
    { type: 'AllNamespaces', supported: false },
  ],
  customresourcedefinitions: { owned: [{ name: 'things.x.io', version: 'v1', kind: 'Thing' }] },
};

t.test(
  'catalog messy - a CSV given as YAML, or as JSON with kind after other keys, is found',
  (t) => {
    const yamlCsv = [
      'apiVersion: operators.coreos.com/v1alpha1',
      'kind: ClusterServiceVersion',
      'metadata: {name: a.v1}',
      `spec: ${JSON.stringify(csvSpec)}`,
    ].join('\n');
    const sortedJsonCsv = JSON.stringify({
      apiVersion: 'operators.coreos.com/v1alpha1',
      // a nested kind first, then the real one
      metadata: { name: 'a.v1', ownerReferences: [{ kind: 'Other' }] },
      spec: csvSpec,
      kind: 'ClusterServiceVersion',
    });
    const crd = JSON.stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
    });
    for (const csv of [yamlCsv, sortedJsonCsv]) {
      const { index, warnings } = build(
        pkg('a', 'stable'),
        channel('a', 'stable', [{ name: 'a.v1' }]),
        bareBundle([objectProperty(crd), objectProperty(csv)]),
      );
      t.same(warnings, []);
      t.same(index.getBundle('a', 'a.v1')?.installModes, csvSpec.installModes);
      t.same(index.getBundle('a', 'a.v1')?.providedApis, [
        { group: 'x.io', version: 'v1', kind: 'Thing', plural: 'things' },
      ]);
    }
    t.end();
  },
);

t.test('catalog messy - an undecodable bundle object is reported and skipped', (t) => {
  const { index, warnings } = build(
    pkg('a', 'stable'),
    channel('a', 'stable', [{ name: 'a.v1' }]),
    bareBundle([objectProperty('kind: [unclosed'), csvMetadata]),
  );
  t.same(codes(warnings), ['bundle-object-invalid']);
  t.match(warnings[0]?.message, /olm.bundle.object #1 cannot be decoded/);
  t.same(index.getBundle('a', 'a.v1')?.installModes, csvMetadata.value.installModes);
  t.end();
});
