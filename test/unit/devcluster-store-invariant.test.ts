// The store invariant under a seeded pseudo-random sequence of requests to the core: creates,
// updates, patches, deletes and deletecollections of namespaced and cluster-scoped objects,
// with stray namespaces in bodies, stale resourceVersions and finalizers. After every step:
// exactly one object per key, LIST equals the set of GETs, and watches — one live since the
// start and one replaying from the start — reach that same state.
import t from 'tap';
import { ApiCore, systemWrite } from '../../devcluster/api/core.js';
import { ApiError } from '../../devcluster/api/errors.js';
import { builtinResourceTypes } from '../../devcluster/resources/builtin.js';
import { apiVersionOf, ResourceRegistry, storageKey } from '../../devcluster/resources/registry.js';
import type { ResourceType } from '../../devcluster/resources/types.js';
import { ObjectStore } from '../../devcluster/storage/store.js';
import type { WatchSink } from '../../devcluster/storage/types.js';
import { WatchHub } from '../../devcluster/storage/watch.js';
import { text, type JsonObject } from '../../shared/kube/json.js';
import { parseLabelSelector } from '../../shared/kube/selectors.js';

/** mulberry32: a small seeded generator, so a failing seed replays exactly. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const namespaces = ['alpha', 'beta'];
const names = ['a', 'b', 'c', 'd'];
const finalizer = 'example.olmq.io/hold';
/** Kube's answers to requests that may be refused; anything else fails the test. */
const refusals = new Set(['AlreadyExists', 'NotFound', 'Conflict', 'BadRequest', 'Invalid']);
const everything = {
  labelSelector: [],
  fieldSelector: [],
  limit: undefined,
  continueToken: undefined,
};

const meta = (o: JsonObject) => o['metadata'] as JsonObject;
const identity = (o: JsonObject) => `${text(meta(o)['namespace'] ?? '')}/${text(meta(o)['name'])}`;

/** Objects by namespace/name as a watch's events leave them. */
class WatchedState implements WatchSink {
  readonly objects = new Map<string, JsonObject>();
  write(line: string | Buffer): void {
    for (const raw of line.toString().split('\n')) {
      if (raw === '') continue;
      const event = JSON.parse(raw) as { type: string; object: JsonObject };
      if (event.type === 'DELETED') this.objects.delete(identity(event.object));
      else if (event.type === 'ADDED' || event.type === 'MODIFIED')
        this.objects.set(identity(event.object), event.object);
      else throw new Error(`unexpected ${event.type} event`);
    }
  }
  end(): void {}
}

function run(seed: number, steps: number) {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const chance = (p: number) => next() < p;
  const store = new ObjectStore();
  const core = new ApiCore({ store, registry: new ResourceRegistry(builtinResourceTypes()) });
  for (const ns of namespaces)
    core.create(core.typeOf('', 'namespaces'), '', { metadata: { name: ns } }, systemWrite());
  const types = [
    core.typeOf('', 'configmaps'),
    core.typeOf('rbac.authorization.k8s.io', 'clusterrolebindings'),
  ];
  const hub = new WatchHub(store);
  const start = store.currentResourceVersion();
  const filterOf = (type: ResourceType) => ({
    key: storageKey(type.group, type.resource),
    apiVersion: apiVersionOf(type.group, type.version),
    kind: type.kind,
    namespace: undefined,
    matches: () => true,
  });
  const watchOptions = {
    allowBookmarks: false,
    timeoutSeconds: undefined,
    bookmarkIntervalMs: 60_000,
  };
  const live = types.map((type) => {
    const state = new WatchedState();
    hub.open(filterOf(type), state, { ...watchOptions, fromResourceVersion: start });
    return state;
  });

  const bodyOf = (type: ResourceType, ns: string, name: string): JsonObject => {
    const metadata: JsonObject = { name, labels: { group: pick(['g0', 'g1']) } };
    // Stray namespaces: on cluster-scoped objects (dropped), on namespaced ones (400 when wrong).
    if (chance(0.5)) metadata['namespace'] = pick([ns, ...namespaces]);
    if (chance(0.3)) metadata['finalizers'] = [finalizer];
    if (!type.namespaced) {
      return {
        metadata,
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ kind: 'ServiceAccount', name: 'sa', namespace: pick(namespaces) }],
      };
    }
    return { metadata, data: { v: String(Math.floor(next() * 1000)) } };
  };

  const step = () => {
    const type = pick(types);
    const ns = type.namespaced ? pick(namespaces) : '';
    const name = pick(names);
    const op = pick(['create', 'create', 'update', 'patch', 'delete', 'deletecollection']);
    const current = core.find(type, ns, name);
    switch (op) {
      case 'create':
        core.create(type, ns, bodyOf(type, ns, name), systemWrite());
        return;
      case 'update': {
        const body = bodyOf(type, ns, name);
        const m = meta(body);
        // Keeping finalizers sometimes, dropping them others, lets marked objects go.
        if (current && chance(0.5))
          m['finalizers'] = structuredClone(meta(current)['finalizers'] ?? []);
        if (current && chance(0.7)) m['resourceVersion'] = meta(current)['resourceVersion'] ?? '';
        else if (chance(0.5)) m['resourceVersion'] = String(store.currentResourceVersion() + 7);
        core.update(type, ns, name, body, systemWrite());
        return;
      }
      case 'patch': {
        const metadata: JsonObject = { labels: { group: pick(['g0', 'g1']) } };
        if (chance(0.4)) metadata['namespace'] = pick(namespaces);
        if (chance(0.3)) metadata['finalizers'] = chance(0.5) ? [finalizer] : null;
        if (chance(0.2)) metadata['resourceVersion'] = '1';
        const patch = JSON.stringify({ metadata });
        core.patch(type, ns, name, 'merge', patch, { ...systemWrite(), force: false });
        return;
      }
      case 'delete':
        core.delete(type, ns, name, { dryRun: false });
        return;
      case 'deletecollection': {
        // As the deletecollection handler: each listed object deleted on its own.
        const selector = parseLabelSelector(`group=${pick(['g0', 'g1'])}`);
        const listed = core.list(type, type.namespaced ? ns : undefined, {
          ...everything,
          labelSelector: selector,
        });
        for (const item of listed.items) {
          const m = meta(item);
          core.delete(type, text(m['namespace'] ?? ''), text(m['name']), { dryRun: false });
        }
        return;
      }
    }
  };

  const check = (i: number) => {
    types.forEach((type, index) => {
      const key = storageKey(type.group, type.resource);
      const listed = core.list(type, undefined, everything).items;
      // A cluster-scoped object's key is its name alone, whatever namespace it may carry.
      const ids = listed.map((o) => (type.namespaced ? identity(o) : text(meta(o)['name'])));
      if (new Set(ids).size !== ids.length)
        throw new Error(`step ${i}: duplicate keys ${ids.join(', ')}`);
      for (const object of listed) {
        const m = meta(object);
        if (m['deletionTimestamp'] !== undefined) marked++;
        const ns = text(m['namespace'] ?? '');
        if (type.namespaced !== (ns !== ''))
          throw new Error(`step ${i}: ${type.kind} ${identity(object)} has the wrong scope`);
        const got = core.get(type, ns, text(m['name']));
        if (got !== object && JSON.stringify(got) !== JSON.stringify(object))
          throw new Error(`step ${i}: LIST and GET differ for ${identity(object)}`);
        if (store.get(key, ns, text(m['name'])) === undefined)
          throw new Error(`step ${i}: ${identity(object)} is not stored under its identity`);
      }
      const expected = JSON.stringify(listed);
      const sorted = (state: WatchedState) =>
        JSON.stringify([...state.objects.keys()].sort().map((k) => state.objects.get(k)));
      if (sorted(live[index] as WatchedState) !== expected)
        throw new Error(`step ${i}: the live ${type.kind} watch differs from LIST`);
      const replay = new WatchedState();
      hub.open(filterOf(type), replay, { ...watchOptions, fromResourceVersion: start }).close();
      if (sorted(replay) !== expected)
        throw new Error(
          `step ${i}: a ${type.kind} watch replayed from the start differs from LIST`,
        );
    });
  };

  let marked = 0;
  const outcomes = new Map<string, number>();
  for (let i = 0; i < steps; i++) {
    try {
      step();
      outcomes.set('ok', (outcomes.get('ok') ?? 0) + 1);
    } catch (error) {
      if (!(error instanceof ApiError && refusals.has(error.reason))) throw error;
      outcomes.set(error.reason, (outcomes.get(error.reason) ?? 0) + 1);
    }
    check(i);
  }
  return { outcomes, marked };
}

for (const seed of [1, 2, 3, 42, 1234, 20261126]) {
  void t.test(`store invariant - seed ${seed}: one object per key, LIST = GETs = watches`, (t) => {
    const { outcomes, marked } = run(seed, 250);
    t.ok(marked > 0, 'finalizers held deleted objects at some steps');
    t.ok((outcomes.get('ok') ?? 0) > 100, 'most requests succeed');
    t.ok(
      outcomes.size > 2,
      `requests are refused for several reasons too: ${[...outcomes.keys()].join(', ')}`,
    );
    t.end();
  });
}
