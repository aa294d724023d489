// ConfigMap catalogs: upstream's format converted to File-Based Catalog objects, and FBC text.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { parse, stringify } from 'yaml';
import { readConfigMapCatalog } from '../../functions/catalog/configmap-catalog.js';
import {
  buildCatalogIndex,
  readCatalogDirectory,
  type CatalogIndex,
} from '../../shared/catalog/index.js';
import { configMapFormatOf } from '../harness/catalog.js';
import { smallCatalog } from '../harness/repo.js';

const small = smallCatalog;

const graph = (index: CatalogIndex, pkg: string) =>
  index.channelsOf(pkg).map((c) => ({
    name: c.name,
    head: c.head,
    entries: c.entries.map((e) => ({ name: e.name, replaces: e.replaces, skipRange: e.skipRange })),
  }));

// etcd's channels follow its CSVs' spec.replaces, which is all the ConfigMap format can express
// (node-maintenance-operator's FBC channels do not; prometheus's huge CRDs make a slow unit test).
for (const pkg of ['etcd']) {
  t.test(
    `catalog configmap - the ConfigMap format of ${pkg} converts to its FBC graph`,
    async (t) => {
      const data = await configMapFormatOf(join(small, pkg));
      const catalog = readConfigMapCatalog('cm', data);
      t.equal(catalog.layout, 'configmap');
      t.same(catalog.warnings, [], 'nothing irregular in the conversion');
      const converted = buildCatalogIndex(catalog.objects).index;
      const original = buildCatalogIndex(await readCatalogDirectory(join(small, pkg))).index;
      t.same(graph(converted, pkg), graph(original, pkg));
      t.same(
        converted.bundles.map((b) => [b.name, b.version, b.installModes]),
        original.bundles.map((b) => [b.name, b.version, b.installModes]),
        'bundles with versions and install modes',
      );
    },
  );
}

t.test(
  'catalog configmap - a CSV off every replaces chain is dropped with a warning',
  async (t) => {
    const data = await configMapFormatOf(join(small, 'etcd'));
    const packages = parse(data['packages'] ?? '') as { channels: { name: string }[] }[];
    // Only the alpha channel is offered: the other CSVs are not reachable.
    packages[0]!.channels = packages[0]!.channels.filter((c) => c.name === 'alpha');
    const catalog = readConfigMapCatalog('cm', { ...data, packages: stringify(packages) });
    const dropped = catalog.warnings.filter((w) => w.code === 'bundle-not-in-channel');
    t.equal(dropped.length, 5);
    t.match(dropped[0], {
      origin: 'configmap/cm/clusterServiceVersions',
      message: /is not on the replaces chain of any channel's currentCSV; dropped$/,
    });
    t.equal(buildCatalogIndex(catalog.objects).index.bundles.length, 1);
  },
);

t.test('catalog configmap - a currentCSV naming no CSV is reported', (t) => {
  const catalog = readConfigMapCatalog('cm', {
    packages: stringify([{ packageName: 'a', channels: [{ name: 'stable', currentCSV: 'a.v1' }] }]),
  });
  t.match(catalog.warnings, [
    { code: 'channel-entry-unknown-bundle', package: 'a', channel: 'stable', bundle: 'a.v1' },
  ]);
  t.end();
});

t.test('catalog configmap - unusable ConfigMaps say what and why', (t) => {
  t.throws(() => readConfigMapCatalog('cm', {}), {
    name: 'ConfigMapCatalogError',
    message:
      'configmap cm has no data: expected the keys customResourceDefinitions, clusterServiceVersions, packages, or File-Based Catalog files',
    retryable: false,
  });
  t.throws(() => readConfigMapCatalog('cm', { clusterServiceVersions: '[]' }), {
    message:
      'configmap cm is not a usable catalog: it has clusterServiceVersions but no packages key, so no package can be served',
  });
  t.throws(() => readConfigMapCatalog('cm', { packages: 'a: [' }), {
    message: /^configmap cm is not a usable catalog: key packages is not valid YAML: /,
  });
  t.throws(() => readConfigMapCatalog('cm', { packages: 'a: b' }), {
    message: 'configmap cm is not a usable catalog: key packages must be a YAML list',
  });
  t.throws(() => readConfigMapCatalog('cm', { 'catalog.json': '{"schema": "olm.package", ' }), {
    message: /^configmap cm is not a usable catalog: configmap\/cm\/catalog.json:1: /,
  });
  t.end();
});

t.test('catalog configmap - without the upstream keys, every data key is FBC', async (t) => {
  const json = await readFile(join(small, 'etcd', 'catalog.json'), 'utf8');
  const catalog = readConfigMapCatalog('cm', { 'etcd.json': json });
  t.equal(catalog.layout, 'fbc');
  const index = buildCatalogIndex(catalog.objects).index;
  t.equal(
    index.digest,
    buildCatalogIndex(await readCatalogDirectory(join(small, 'etcd'))).index.digest,
  );
  const yaml = readConfigMapCatalog('cm', {
    catalog: 'schema: olm.package\nname: a\ndefaultChannel: stable\n',
  });
  t.equal(yaml.objects[0]?.schema, 'olm.package', 'a key without extension is detected as YAML');
});
