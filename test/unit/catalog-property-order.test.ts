// A bundle's properties in the catalog's own order: upstream records them on the CSV
// (operatorframework.io/properties) as the catalog lists them, so the index keeps a list whose
// order (or content) the fields cannot rebuild, and nothing for catalogs in `opm render` order.
import t from 'tap';
import {
  allBundleProperties,
  buildCatalogFromTexts,
  loadCatalogDirectory,
  loadCatalogIndex,
  serializeCatalogIndex,
} from '../../shared/catalog/index.js';
import { smallCatalog } from '../harness/repo.js';

const gvk = { type: 'olm.gvk', value: { group: 'x.io', kind: 'Widget', version: 'v1' } };
const pkg = { type: 'olm.package', value: { packageName: 'a', version: '1.0.0' } };
const needs = {
  type: 'olm.package.required',
  value: { packageName: 'b', versionRange: '>=1.0.0' },
};
const maxOcp = { type: 'olm.maxOpenShiftVersion', value: '4.12' };
const csvMetadata = { type: 'olm.csv.metadata', value: { installModes: [] } };

function catalogWith(properties: readonly object[]) {
  return buildCatalogFromTexts({
    'catalog.json': [
      { schema: 'olm.package', name: 'a', defaultChannel: 'stable' },
      { schema: 'olm.channel', package: 'a', name: 'stable', entries: [{ name: 'a.v1' }] },
      { schema: 'olm.bundle', package: 'a', name: 'a.v1', image: 'example.com/a:1', properties },
    ]
      .map((o) => JSON.stringify(o))
      .join('\n'),
  }).index;
}

void t.test('property order - a hand-written order is what the bundle lists', (t) => {
  const index = catalogWith([pkg, maxOcp, csvMetadata, needs, gvk]);
  const bundle = index.bundles[0];
  if (bundle === undefined) throw new Error('no bundle');
  t.same(allBundleProperties(bundle), [pkg, maxOcp, needs, gvk], 'the catalog order, no manifests');
  const loaded = loadCatalogIndex(serializeCatalogIndex(index)).bundles[0];
  if (loaded === undefined) throw new Error('no bundle after load');
  t.same(allBundleProperties(loaded), [pkg, maxOcp, needs, gvk], 'kept through the object store');
  t.same(loaded.dependencies, bundle.dependencies, 'the fields are unchanged');
  t.end();
});

void t.test('property order - the opm render order costs the index nothing', (t) => {
  const bundle = catalogWith([gvk, pkg, needs, maxOcp, csvMetadata]).bundles[0];
  if (bundle === undefined) throw new Error('no bundle');
  t.equal(bundle.listedProperties, undefined);
  t.same(allBundleProperties(bundle), [gvk, pkg, needs, maxOcp]);
  t.end();
});

void t.test('property order - duplicates the catalog lists are kept', (t) => {
  const bundle = catalogWith([gvk, gvk, pkg]).bundles[0];
  if (bundle === undefined) throw new Error('no bundle');
  t.same(allBundleProperties(bundle), [gvk, gvk, pkg]);
  t.end();
});

void t.test('property order - real bundles not in the rebuilt order keep theirs', async (t) => {
  // hawtio-operator 0.1.0 lists olm.maxOpenShiftVersion between olm.gvk and olm.package.
  const { index } = await loadCatalogDirectory(smallCatalog);
  const hawtio = index.getBundle('hawtio-operator', 'hawtio-operator.v0.1.0');
  if (hawtio === undefined)
    throw new Error('hawtio-operator.v0.1.0 missing from the small catalog');
  t.same(
    allBundleProperties(hawtio).map((p) => p.type),
    ['olm.gvk', 'olm.maxOpenShiftVersion', 'olm.package'],
  );
  const etcd = index.getBundle('etcd', 'etcdoperator.v0.9.4');
  t.equal(etcd?.listedProperties, undefined, 'a bundle in the rebuilt order keeps no list');
});
