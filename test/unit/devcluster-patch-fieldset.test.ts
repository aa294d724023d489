import t from 'tap';
import { FieldSet, describePath } from '../../devcluster/patch/fieldset.js';

void t.test('field set - FieldsV1 is written in kube-apiserver order', (t) => {
  const set = new FieldSet();
  set.insert(['f:spec', 'f:ports', 'k:{"port":443,"protocol":"TCP"}']);
  set.insert(['f:spec', 'f:ports', 'k:{"port":80,"protocol":"TCP"}']);
  set.insert(['f:spec', 'f:ports', 'k:{"port":80,"protocol":"TCP"}', 'f:port']);
  set.insert(['f:metadata', 'f:finalizers', 'v:"b"']);
  set.insert(['f:metadata', 'f:finalizers', 'v:"a"']);
  set.insert(['f:metadata', 'f:annotations', 'f:z']);
  set.insert(['f:metadata', 'f:annotations', 'f:a']);
  t.equal(
    JSON.stringify(set.toFieldsV1()),
    JSON.stringify({
      'f:metadata': {
        'f:annotations': { 'f:a': {}, 'f:z': {} },
        'f:finalizers': { 'v:"a"': {}, 'v:"b"': {} },
      },
      'f:spec': {
        'f:ports': {
          'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {} },
          'k:{"port":443,"protocol":"TCP"}': {},
        },
      },
    }),
  );
  t.end();
});

void t.test('field set - FieldsV1 reads back to the same set', (t) => {
  const fieldsV1 = {
    'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
    'f:spec': {
      'f:containers': { 'k:{"name":"a"}': { '.': {}, 'f:image': {} } },
      'f:replicas': {},
    },
  };
  t.strictSame(FieldSet.fromFieldsV1(fieldsV1).toFieldsV1(), fieldsV1);
  t.end();
});

void t.test('field set - difference keeps parents only for remaining members', (t) => {
  const a = FieldSet.fromFieldsV1({ 'f:spec': { 'f:replicas': {}, 'f:paused': {} } });
  const b = FieldSet.fromFieldsV1({ 'f:spec': { 'f:replicas': {} } });
  t.strictSame(a.difference(b).toFieldsV1(), { 'f:spec': { 'f:paused': {} } });
  t.ok(b.difference(a).isEmpty());
  t.end();
});

void t.test('field set - intersection holds the common members', (t) => {
  const a = FieldSet.fromFieldsV1({ 'f:spec': { 'f:replicas': {}, 'f:paused': {} } });
  const b = FieldSet.fromFieldsV1({ 'f:spec': { 'f:replicas': {}, 'f:selector': {} } });
  t.strictSame(a.intersection(b).toFieldsV1(), { 'f:spec': { 'f:replicas': {} } });
  t.end();
});

const described: [string[], string][] = [
  [['f:spec', 'f:replicas'], '.spec.replicas'],
  [
    ['f:spec', 'f:containers', 'k:{"name":"nginx"}', 'f:image'],
    '.spec.containers[name="nginx"].image',
  ],
  [['f:spec', 'f:ports', 'k:{"port":80,"protocol":"TCP"}'], '.spec.ports[port=80,protocol="TCP"]'],
  [['f:metadata', 'f:finalizers', 'v:"x"'], '.metadata.finalizers[="x"]'],
  [['f:spec', 'f:args', 'i:2'], '.spec.args[2]'],
];

for (const [path, expected] of described) {
  void t.test(`field set - a path reads ${expected} in conflict messages`, (t) => {
    t.equal(describePath(path), expected);
    t.end();
  });
}
