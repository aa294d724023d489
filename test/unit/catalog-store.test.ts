// Digest, serialization and directory reading of catalogs.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  buildCatalogFromTexts,
  buildCatalogIndex,
  catalogDigest,
  loadCatalogContent,
  loadCatalogDirectory,
  loadCatalogIndex,
  parseCatalogText,
  readCatalogDirectory,
  serializeCatalogContent,
  serializeCatalogIndex,
  SerializedIndexError,
  CatalogUnreadableError,
  type CatalogIndex,
} from '../../shared/catalog/index.js';
import { smallCatalog } from '../harness/repo.js';

const small = smallCatalog;

function indexData(index: CatalogIndex) {
  return {
    digest: index.digest,
    packages: index.packages,
    channels: index.channels,
    bundles: index.bundles,
  };
}

const fbc = [
  '{"schema":"olm.package","name":"a","defaultChannel":"stable"}',
  '{"schema":"olm.channel","package":"a","name":"stable","entries":[{"name":"a.v1"}]}',
  '{"schema":"olm.bundle","package":"a","name":"a.v1","image":"example.com/a:1","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}},{"type":"olm.csv.metadata","value":{"installModes":[]}}]}',
];

t.test('catalog store - the digest is stable across reads of the same directory', async (t) => {
  const first = catalogDigest(await readCatalogDirectory(small));
  const second = catalogDigest(await readCatalogDirectory(small));
  t.match(first, /^sha256:[0-9a-f]{64}$/);
  t.equal(first, second);
});

t.test('catalog store - the digest ignores object order and file layout', (t) => {
  const oneFile = parseCatalogText(fbc.join('\n'), 'catalog.json');
  const split = [
    ...parseCatalogText(fbc[2] ?? '', 'b.json'),
    ...parseCatalogText(`${fbc[1] ?? ''}\n\n${fbc[0] ?? ''}`, 'a.json'),
  ];
  t.equal(catalogDigest(oneFile), catalogDigest(split));
  t.end();
});

t.test('catalog store - the digest changes when content changes', (t) => {
  const before = catalogDigest(parseCatalogText(fbc.join('\n'), 'catalog.json'));
  const changed = fbc.join('\n').replace('example.com/a:1', 'example.com/a:2');
  t.not(catalogDigest(parseCatalogText(changed, 'catalog.json')), before);
  t.end();
});

t.test('catalog store - an index survives serialize and load unchanged', async (t) => {
  const { index } = await loadCatalogDirectory(small);
  const bytes = serializeCatalogIndex(index);
  const loaded = loadCatalogIndex(bytes);
  t.same(indexData(loaded), indexData(index));
  t.equal(loaded.channelHead('etcd', 'alpha')?.name, 'etcdoperator.v0.6.1');
  t.same(
    loaded.upgradesFrom('node-maintenance-operator', 'stable', {
      name: 'node-maintenance-operator.v0.20.1',
    }),
    index.upgradesFrom('node-maintenance-operator', 'stable', {
      name: 'node-maintenance-operator.v0.20.1',
    }),
  );
});

t.test(
  'catalog store - bundle content survives serialize and load, decoded per bundle',
  async (t) => {
    const { content } = await loadCatalogDirectory(small);
    const loaded = loadCatalogContent(serializeCatalogContent(content));
    t.equal(loaded.digest, content.digest);
    t.equal(loaded.size, 62);
    t.same(
      loaded.get('prometheus', 'prometheusoperator.0.56.3'),
      content.get('prometheus', 'prometheusoperator.0.56.3'),
    );
    t.equal(loaded.get('prometheus', 'nope'), undefined);
  },
);

t.test('catalog store - bytes that are not an index are rejected', (t) => {
  t.throws(() => loadCatalogIndex(Buffer.from('{"format":"other"}')), SerializedIndexError);
  t.throws(() => loadCatalogIndex(Buffer.from('not json')), SerializedIndexError);
  t.throws(() => loadCatalogContent(Buffer.from('no header')), SerializedIndexError);
  t.end();
});

t.test('catalog store - a directory honours .indexignore and reads nested YAML', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'olmq-catalog-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'a', 'more'), { recursive: true });
  await mkdir(join(dir, 'drafts'));
  await writeFile(
    join(dir, '.indexignore'),
    '# not catalog content\n/drafts/\n*.md\nskip-*.json\n',
  );
  await writeFile(join(dir, 'README.md'), 'not JSON at all {');
  await writeFile(join(dir, 'drafts', 'broken.json'), '{"schema": ');
  await writeFile(join(dir, 'a', 'skip-me.json'), '{"schema": ');
  await writeFile(join(dir, 'a', 'catalog.json'), `${fbc[0] ?? ''}\n${fbc[1] ?? ''}\n`);
  await writeFile(
    join(dir, 'a', 'more', 'bundle.yaml'),
    '---\nschema: olm.bundle\npackage: a\nname: a.v1\nimage: example.com/a:1\nproperties:\n- type: olm.package\n  value: {packageName: a, version: 1.0.0}\n- type: olm.csv.metadata\n  value: {installModes: []}\n',
  );
  await writeFile(join(dir, 'a', 'notes.txt'), 'ignored: not a catalog file type');
  const { index, warnings } = await loadCatalogDirectory(dir);
  t.same(warnings, []);
  t.equal(index.channelHead('a', 'stable')?.image, 'example.com/a:1');
  const objects = await readCatalogDirectory(dir);
  t.same(objects.map((o) => o.origin).sort(), [
    'a/catalog.json:1',
    'a/catalog.json:2',
    'a/more/bundle.yaml:2',
  ]);
});

t.test('catalog store - a missing directory is an unreadable-catalog error', async (t) => {
  await t.rejects(
    readCatalogDirectory(join(tmpdir(), 'olmq-no-such-catalog')),
    CatalogUnreadableError,
  );
});

t.test('catalog store - ConfigMap data builds the same index as the files', (t) => {
  const fromMap = buildCatalogFromTexts({ 'catalog.json': fbc.join('\n') });
  const fromObjects = buildCatalogIndex(parseCatalogText(fbc.join('\n'), 'catalog.json'));
  t.same(indexData(fromMap.index), indexData(fromObjects.index));
  t.end();
});

t.test('catalog store - .indexignore patterns follow gitignore rules', async (t) => {
  const { compileIgnoreRules } = await import('../../shared/catalog/index-ignore.js');
  const rules = compileIgnoreRules(
    ['# comment', '*.tsv', '/top-only.json', 'docs/', '**/drafts/*.json', '!keep.tsv', ''].join(
      '\n',
    ),
  );
  t.ok(rules.ignores('SOURCES.tsv', false), 'basename glob at the root');
  t.ok(rules.ignores('pkg/deep/QUIRKS.tsv', false), 'basename glob at any depth');
  t.notOk(rules.ignores('pkg/keep.tsv', false), 'negation re-includes');
  t.ok(rules.ignores('top-only.json', false), 'anchored pattern at its folder');
  t.notOk(rules.ignores('pkg/top-only.json', false), 'anchored pattern not below');
  t.ok(rules.ignores('docs', true), 'directory pattern matches a directory');
  t.notOk(rules.ignores('docs', false), 'directory pattern does not match a file');
  t.ok(rules.ignores('a/b/drafts/x.json', false), '** spans folders');
  t.notOk(rules.ignores('a/b/catalog.json', false));
});
