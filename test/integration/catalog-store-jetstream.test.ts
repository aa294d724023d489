// shared/catalog/store.ts against a real nats-server: indexes stored by digest in the object
// store, the digest-keyed cache, and the CatalogIndex records in the object mirror.
import { join } from 'node:path';
import type { ObjectStore } from '@nats-io/obj';
import t from 'tap';
import { objectKey } from '../../shared/bus/subjects.js';
import {
  decodeBundleManifests,
  loadCatalogDirectory,
  type CatalogBuildResult,
} from '../../shared/catalog/index.js';
import {
  CatalogIndexCache,
  CatalogNotStoredError,
  catalogIndexKind,
  deleteCatalogIndexRecord,
  fetchCatalogContent,
  fetchCatalogIndex,
  openCatalogStore,
  putCatalogIndexRecord,
  readCatalogIndexRecords,
  storeCatalog,
  type CatalogIndexRecord,
} from '../../shared/handoff/index.js';
import { backboneFor } from '../harness/backbone.js';
import { smallCatalog } from '../harness/repo.js';

const small = smallCatalog;

let etcd: CatalogBuildResult;
let hawtio: CatalogBuildResult;
t.before(async () => {
  etcd = await loadCatalogDirectory(join(small, 'etcd'));
  hawtio = await loadCatalogDirectory(join(small, 'hawtio-operator'));
});

// Counts object reads of a store, to see what the cache fetches.
function counting(store: ObjectStore): { store: ObjectStore; fetches: () => number } {
  let fetches = 0;
  const wrapped = Object.create(store) as ObjectStore;
  wrapped.get = (name: string) => {
    fetches++;
    return store.get(name);
  };
  return { store: wrapped, fetches: () => fetches };
}

t.test('catalog store - an index and its content round-trip by digest, stored once', async (t) => {
  const backbone = await backboneFor(t);
  const store = await openCatalogStore(backbone);
  await storeCatalog(store, etcd.index, etcd.content);
  const loaded = await fetchCatalogIndex(store, etcd.index.digest);
  t.equal(loaded.digest, etcd.index.digest);
  t.same(
    loaded.channelsOf('etcd').map((c) => c.head),
    etcd.index.channelsOf('etcd').map((c) => c.head),
  );
  const content = await fetchCatalogContent(store, etcd.index.digest);
  const bundle = content.get('etcd', 'etcdoperator.v0.9.4');
  t.ok(bundle, 'the manifests are stored with the index');
  t.equal(
    (decodeBundleManifests(bundle!).csv?.['metadata'] as { name?: string } | undefined)?.name,
    'etcdoperator.v0.9.4',
  );
  const before = (await store.info(`index/${etcd.index.digest.replace(':', '=3A')}`))?.revision;
  await storeCatalog(store, etcd.index, etcd.content);
  const after = (await store.info(`index/${etcd.index.digest.replace(':', '=3A')}`))?.revision;
  t.ok(before !== undefined, 'stored under index/<digest>');
  t.equal(after, before, 'storing the same digest again writes nothing');
});

t.test('catalog store - an unknown digest is CatalogNotStoredError naming it', async (t) => {
  const backbone = await backboneFor(t);
  const store = await openCatalogStore(backbone);
  await t.rejects(fetchCatalogIndex(store, 'sha256:0000'), {
    name: 'CatalogNotStoredError',
    digest: 'sha256:0000',
    message: 'catalog index sha256:0000 is not in the olmq_catalogs object store',
  });
  await t.rejects(fetchCatalogContent(store, 'sha256:0000'), CatalogNotStoredError);
});

t.test(
  'catalog store - the cache fetches each digest once, shared by concurrent readers',
  async (t) => {
    const backbone = await backboneFor(t);
    const raw = await openCatalogStore(backbone);
    await storeCatalog(raw, etcd.index, etcd.content);
    const { store, fetches } = counting(raw);
    const cache = new CatalogIndexCache(store);
    const [a, b] = await Promise.all([cache.get(etcd.index.digest), cache.get(etcd.index.digest)]);
    t.equal(a, b, 'the same loaded index');
    await cache.get(etcd.index.digest);
    t.equal(fetches(), 1);
  },
);

t.test('catalog store - the cache drops the least recently used beyond its capacity', async (t) => {
  const backbone = await backboneFor(t);
  const raw = await openCatalogStore(backbone);
  await storeCatalog(raw, etcd.index, etcd.content);
  await storeCatalog(raw, hawtio.index, hawtio.content);
  const { store, fetches } = counting(raw);
  const cache = new CatalogIndexCache(store, 1);
  await cache.get(etcd.index.digest);
  await cache.get(hawtio.index.digest);
  await cache.get(etcd.index.digest);
  t.equal(fetches(), 3, 'etcd was dropped for hawtio and fetched again');
});

t.test('catalog store - a failed fetch is not cached', async (t) => {
  const backbone = await backboneFor(t);
  const store = await openCatalogStore(backbone);
  const cache = new CatalogIndexCache(store);
  await t.rejects(cache.get(etcd.index.digest), CatalogNotStoredError);
  await storeCatalog(store, etcd.index, etcd.content);
  t.equal((await cache.get(etcd.index.digest)).digest, etcd.index.digest);
});

function record(namespace: string, name: string, digest: string): CatalogIndexRecord {
  return {
    namespace,
    name,
    digest,
    priority: 0,
    displayName: '',
    publisher: '',
    sourceType: 'grpc',
    healthy: true,
    updatedAt: '2026-11-22T10:00:00Z',
    packages: 1,
    bundles: 6,
  };
}

t.test('catalog store - an equal record is not rewritten, whatever its field order', async (t) => {
  const backbone = await backboneFor(t);
  const key = objectKey({ cluster: 'c1', kind: catalogIndexKind, namespace: 'olm', name: 'a' });
  await putCatalogIndexRecord(backbone, 'c1', record('olm', 'a', 'sha256:1'));
  const first = (await backbone.objects.get(key))?.revision;
  const { bundles, packages, ...rest } = record('olm', 'a', 'sha256:1');
  await putCatalogIndexRecord(backbone, 'c1', { bundles, packages, ...rest });
  t.equal((await backbone.objects.get(key))?.revision, first, 'no rewrite');
  await putCatalogIndexRecord(backbone, 'c1', record('olm', 'a', 'sha256:2'));
  t.not((await backbone.objects.get(key))?.revision, first, 'a changed record is written');
});

t.test('catalog store - records are listed per namespace, sorted, and deleted', async (t) => {
  const backbone = await backboneFor(t);
  await putCatalogIndexRecord(backbone, 'c1', record('olm', 'b', 'sha256:1'));
  await putCatalogIndexRecord(backbone, 'c1', record('olm', 'a', 'sha256:1'));
  await putCatalogIndexRecord(backbone, 'c1', record('team.x', 'c', 'sha256:1'));
  await putCatalogIndexRecord(backbone, 'c2', record('olm', 'z', 'sha256:1'));
  const names = (rs: CatalogIndexRecord[]) => rs.map((r) => `${r.namespace}/${r.name}`);
  t.same(names(await readCatalogIndexRecords(backbone, 'c1')), ['olm/a', 'olm/b', 'team.x/c']);
  t.same(names(await readCatalogIndexRecords(backbone, 'c1', ['team.x'])), ['team.x/c']);
  t.same(names(await readCatalogIndexRecords(backbone, 'c2')), ['olm/z'], 'per cluster');
  await deleteCatalogIndexRecord(backbone, 'c1', 'olm', 'a');
  t.same(names(await readCatalogIndexRecords(backbone, 'c1', ['olm'])), ['olm/b']);
});
