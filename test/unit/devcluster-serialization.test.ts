// JSON of stored objects and lists, shared between responses and watch events.
import t from 'tap';
import { jsonBytes, listJsonBytes } from '../../devcluster/storage/serialization.js';
import type { JsonObject } from '../../shared/kube/json.js';

const configMap = (name: string): JsonObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default', labels: { 'app.kubernetes.io/name': 'ünï "q"' } },
  data: { 'a.json': '{"x":[1,2]}', empty: '' },
});

void t.test(
  'serialization - a list is the JSON JSON.stringify gives, items taken from their memo',
  (t) => {
    const items = [configMap('a'), configMap('b'), configMap('c')];
    jsonBytes(items[0] as JsonObject); // memoised before listing, as after a write
    const head: JsonObject = {
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '42', continue: 'e30' },
    };
    const text = listJsonBytes(head, items).toString('utf8');
    t.equal(text, JSON.stringify({ ...head, items }));
    t.same(JSON.parse(text), { ...head, items });
    t.end();
  },
);

void t.test('serialization - an empty list and an empty head still make valid JSON', (t) => {
  const head: JsonObject = { kind: 'ConfigMapList', apiVersion: 'v1', metadata: {} };
  t.equal(listJsonBytes(head, []).toString(), JSON.stringify({ ...head, items: [] }));
  t.equal(
    listJsonBytes({}, [configMap('a')]).toString(),
    JSON.stringify({ items: [configMap('a')] }),
  );
  t.end();
});

void t.test('serialization - an object is encoded once, its bytes shared by every use', (t) => {
  const object = configMap('once');
  const bytes = jsonBytes(object);
  t.equal(jsonBytes(object), bytes);
  t.equal(bytes.toString('utf8'), JSON.stringify(object));
  t.same(
    Object.keys(object),
    ['apiVersion', 'kind', 'metadata', 'data'],
    'the memo is not a field',
  );
  t.end();
});
