// Watch forms in the fan-out: watchers asking for the same form (plain at an apiVersion, or a
// shared form such as metadata only) receive the very same encoded line, made once per event.
import t from 'tap';
import { ObjectStore } from '../../devcluster/storage/store.js';
import type { WatchFilter, WatchForm, WatchSink } from '../../devcluster/storage/types.js';
import { WatchHub } from '../../devcluster/storage/watch.js';
import type { JsonObject } from '../../shared/kube/json.js';

class Lines implements WatchSink {
  readonly lines: (string | Buffer)[] = [];
  write(line: string | Buffer): void {
    this.lines.push(line);
  }
  end(): void {}
}

let renders = 0;
const metadataOnly: WatchForm = {
  id: 'PartialObjectMetadata',
  render: (object: JsonObject) => {
    renders++;
    return {
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: object['metadata'] ?? {},
    };
  },
};
const filter = (form?: WatchForm): WatchFilter => ({
  key: 'configmaps',
  apiVersion: 'v1',
  kind: 'ConfigMap',
  namespace: undefined,
  matches: () => true,
  ...(form ? { form } : {}),
});
const options = {
  fromResourceVersion: undefined,
  allowBookmarks: false,
  timeoutSeconds: undefined,
  bookmarkIntervalMs: 60_000,
};

void t.test(
  'watch forms - each form of an event is encoded once and shared by its watchers',
  (t) => {
    const store = new ObjectStore();
    const hub = new WatchHub(store);
    const [meta1, meta2, plain1, plain2] = [new Lines(), new Lines(), new Lines(), new Lines()];
    hub.open(filter(metadataOnly), meta1, options);
    hub.open(filter(metadataOnly), meta2, options);
    hub.open(filter(), plain1, options);
    hub.open(filter(), plain2, options);
    store.put('configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', namespace: 'default' },
      data: { k: 'v' },
    });
    t.equal(renders, 1, 'the metadata form was rendered once');
    t.equal(meta1.lines[0], meta2.lines[0], 'metadata watchers share one line');
    t.equal(plain1.lines[0], plain2.lines[0], 'plain watchers share one line');
    t.match(JSON.parse(String(meta1.lines[0])), {
      type: 'ADDED',
      object: { kind: 'PartialObjectMetadata', metadata: { name: 'a' } },
    });
    t.notOk(String(meta1.lines[0]).includes('"data"'), 'no data in the metadata line');
    t.match(JSON.parse(String(plain1.lines[0])), {
      object: { kind: 'ConfigMap', data: { k: 'v' } },
    });
    t.end();
  },
);
