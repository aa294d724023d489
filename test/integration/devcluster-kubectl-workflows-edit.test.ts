// kubectl edit, patch, label, annotate and replace with every kubectl on the image, on a custom
// resource (CatalogSource) and built-in kinds (ConfigMap, Deployment), asserting what is stored
// and what kubectl prints. Regression: strategic merge patch of a custom resource answered a
// 415 in words of our own; kube-apiserver lists the patch types it accepts.
import type { Test } from 'tap';
import { kubectl, type ClusterFixture } from '../harness/devcluster.js';
import { forEachKubectl, kubectlGet, kubectlOk, sedEditor } from '../harness/kubectl-suite.js';
import {
  catalogSourceYaml,
  configMapYaml,
  containerOf,
  deploymentYaml,
  installCatalogSourceCrd,
  managedBy,
  readObject,
  writeManifest,
  type KubeObject,
} from '../harness/kubectl-manifests.js';

const crNotStrategic =
  'application/strategic-merge-patch+json is not supported by operators.coreos.com/v1alpha1, Kind=CatalogSource: the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml';

const jsonPatchRejected =
  'The request is invalid: the server rejected our request due to an error in our request';

async function read(fixture: ClusterFixture, resource: string): Promise<KubeObject> {
  return readObject(fixture, resource, 'ed');
}

async function create(fixture: ClusterFixture): Promise<void> {
  const manifests = [
    catalogSourceYaml('ed', { image: 'img:v1', displayName: 'Edited' }),
    configMapYaml('ed', { a: '1' }),
    deploymentYaml('ed', { replicas: 1, image: 'nginx:1', env: { A: '1' } }),
  ];
  await kubectlOk(fixture, [
    'create',
    '-f',
    writeManifest(fixture, 'ed.yaml', manifests.join('---\n')),
  ]);
}

async function edit(t: Test, fixture: ClusterFixture): Promise<void> {
  const cases = [
    [
      'catalogsource',
      'catalogsource.operators.coreos.com/ed',
      's/^  image: img:v1$/  image: img:edited/',
    ],
    ['configmap', 'configmap/ed', 's/^  a: "1"$/  a: "2"/'],
    ['deployment', 'deployment.apps/ed', 's/^  replicas: 1$/  replicas: 2/'],
  ] as const;
  for (const [resource, printed, expression] of cases) {
    const env = sedEditor(fixture, `edit-${resource}`, expression);
    const edited = await kubectl(fixture, ['edit', resource, 'ed'], undefined, env);
    t.equal(edited.code, 0, edited.stderr);
    t.equal(edited.stdout.trim(), `${printed} edited`);
    t.ok(
      managedBy(await read(fixture, resource), 'kubectl-edit', 'Update'),
      'kubectl-edit manages it',
    );
  }
  const stored = await Promise.all(cases.map(([resource]) => read(fixture, resource)));
  t.equal(stored[0]?.spec?.['image'], 'img:edited');
  t.same(stored[1]?.data, { a: '2' });
  t.equal(stored[2]?.spec?.['replicas'], 2);

  // An edit the schema refuses: kubectl reports the server's error and changes nothing.
  const before = stored[0]?.metadata.resourceVersion;
  const env = sedEditor(fixture, 'edit-invalid', 's/^  sourceType: grpc$/  sourceType: 5/');
  const invalid = await kubectl(fixture, ['edit', 'catalogsource', 'ed'], undefined, env);
  t.equal(invalid.code, 1, 'an invalid edit fails');
  t.match(invalid.stderr, 'error: catalogsources.operators.coreos.com "ed" is invalid');
  // The server's reasons go into the file kubectl reopens; a patch shows them on stderr.
  const patched = await kubectl(fixture, [
    'patch',
    'catalogsource',
    'ed',
    '--type=merge',
    '-p',
    '{"spec":{"sourceType":5}}',
  ]);
  t.equal(patched.code, 1);
  t.match(
    patched.stderr,
    'The CatalogSource "ed" is invalid: spec.sourceType: Invalid value: "integer": spec.sourceType in body must be of type string: "integer"',
  );
  const after = await read(fixture, 'catalogsource');
  t.equal(after.metadata.resourceVersion, before, 'nothing stored');
}

async function patch(t: Test, fixture: ClusterFixture): Promise<void> {
  const run = (args: string[]) => kubectl(fixture, ['patch', ...args]);
  const cs = ['catalogsource', 'ed'];
  const strategic = await run([...cs, '--type=strategic', '-p', '{"spec":{"publisher":"p"}}']);
  t.equal(strategic.code, 1, 'custom resources take no strategic merge patch');
  t.match(strategic.stderr, crNotStrategic);
  t.equal(
    (
      await kubectlOk(fixture, ['patch', ...cs, '--type=merge', '-p', '{"spec":{"publisher":"p"}}'])
    ).trim(),
    'catalogsource.operators.coreos.com/ed patched',
  );
  t.equal((await read(fixture, 'catalogsource')).spec?.['publisher'], 'p', 'merge patch stored');
  const ops = [
    { op: 'add', path: '/spec/priority', value: 7 },
    { op: 'replace', path: '/spec/image', value: 'img:json' },
    { op: 'remove', path: '/spec/displayName' },
    { op: 'test', path: '/spec/publisher', value: 'p' },
  ];
  await kubectlOk(fixture, ['patch', ...cs, '--type=json', '-p', JSON.stringify(ops)]);
  const jsonPatched = await read(fixture, 'catalogsource');
  t.same(
    jsonPatched.spec,
    { image: 'img:json', priority: 7, publisher: 'p', sourceType: 'grpc' },
    'JSON patch add, replace and remove stored',
  );
  for (const failing of [
    [{ op: 'test', path: '/spec/publisher', value: 'q' }],
    [{ op: 'remove', path: '/spec/missing' }],
  ]) {
    const refused = await run([...cs, '--type=json', '-p', JSON.stringify(failing)]);
    t.equal(refused.code, 1, `${failing[0]?.op} fails`);
    t.match(refused.stderr, jsonPatchRejected);
  }
  t.equal(
    (await read(fixture, 'catalogsource')).metadata.resourceVersion,
    jsonPatched.metadata.resourceVersion,
    'failed JSON patches store nothing',
  );
  // The status subresource (kubectl patch --subresource, kubectl 1.24+).
  await kubectlOk(fixture, [
    'patch',
    ...cs,
    '--subresource=status',
    '--type=merge',
    '-p',
    '{"status":{"message":"from status"}}',
  ]);
  const withStatus = await read(fixture, 'catalogsource');
  t.equal(withStatus.status?.['message'], 'from status');
  t.equal(managedBy(withStatus, 'kubectl-patch', 'Update')?.subresource, undefined);
  t.ok(
    withStatus.metadata.managedFields?.some(
      (e) => e.manager === 'kubectl-patch' && e.subresource === 'status',
    ),
    'the status write is recorded for the subresource',
  );
  const ignored = await run([...cs, '--type=merge', '-p', '{"status":{"message":"from main"}}']);
  t.equal(ignored.code, 0, ignored.stderr);
  t.equal(
    (await read(fixture, 'catalogsource')).status?.['message'],
    'from status',
    'the main resource ignores status',
  );

  // Built-ins: strategic merge patch (kubectl's default) merges lists by key.
  t.equal(
    (await kubectlOk(fixture, ['patch', 'configmap', 'ed', '-p', '{"data":{"b":"2"}}'])).trim(),
    'configmap/ed patched',
  );
  t.same((await read(fixture, 'configmap')).data, { a: '2', b: '2' });
  t.equal(
    (
      await kubectlOk(fixture, [
        'patch',
        'configmap',
        'ed',
        '--type=merge',
        '-p',
        '{"data":{"a":null}}',
      ])
    ).trim(),
    'configmap/ed patched',
  );
  t.same((await read(fixture, 'configmap')).data, { b: '2' }, 'merge patch null removes');
  t.equal(
    (
      await kubectlOk(fixture, [
        'patch',
        'configmap',
        'ed',
        '--type=merge',
        '-p',
        '{"data":{"b":"2"}}',
      ])
    ).trim(),
    'configmap/ed patched (no change)',
  );
  await kubectlOk(fixture, [
    'patch',
    'deployment',
    'ed',
    '-p',
    '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:9"}]}}}}',
  ]);
  const container = containerOf(await read(fixture, 'deployment'));
  t.equal(container['image'], 'nginx:9', 'the container merged by name');
  t.same(container['env'], [{ name: 'A', value: '1' }], 'its other fields kept');
}

async function labels(t: Test, fixture: ClusterFixture, minor: number): Promise<void> {
  // kubectl 1.27 prints "annotate" for a done annotation (fixed in 1.28).
  const annotated = minor <= 27 ? 'annotate' : 'annotated';
  for (const [resource, printed] of [
    ['catalogsource', 'catalogsource.operators.coreos.com/ed'],
    ['configmap', 'configmap/ed'],
  ] as const) {
    const label = (...args: string[]) => kubectl(fixture, ['label', resource, 'ed', ...args]);
    t.equal((await label('tier=a')).stdout.trim(), `${printed} labeled`);
    const refused = await label('tier=b');
    t.equal(refused.code, 1, 'no overwrite without --overwrite');
    t.match(refused.stderr, "error: 'tier' already has a value (a), and --overwrite is false");
    t.equal((await label('tier=b', '--overwrite')).stdout.trim(), `${printed} labeled`);
    t.equal((await read(fixture, resource)).metadata.labels?.['tier'], 'b');
    t.equal((await label('tier-')).stdout.trim(), `${printed} unlabeled`);
    t.equal((await read(fixture, resource)).metadata.labels?.['tier'], undefined, 'label removed');

    const annotate = (...args: string[]) => kubectl(fixture, ['annotate', resource, 'ed', ...args]);
    t.equal((await annotate('note=x')).stdout.trim(), `${printed} ${annotated}`);
    const kept = await annotate('note=y');
    t.equal(kept.code, 1, 'no overwrite without --overwrite');
    t.match(
      kept.stderr,
      "error: --overwrite is false but found the following declared annotation(s): 'note' already has a value (x)",
    );
    t.equal((await annotate('note=y', '--overwrite')).stdout.trim(), `${printed} ${annotated}`);
    t.equal((await read(fixture, resource)).metadata.annotations?.['note'], 'y');
    t.equal((await annotate('note-')).stdout.trim(), `${printed} ${annotated}`);
    t.equal(
      (await read(fixture, resource)).metadata.annotations?.['note'],
      undefined,
      'annotation removed',
    );
  }
  await kubectlOk(fixture, ['label', 'configmap', '--all', '-n', 'default', 'group=all']);
  await kubectlOk(fixture, [
    'label',
    'configmap',
    '-l',
    'group=all',
    '-n',
    'default',
    'selected=yes',
  ]);
  const listed = await kubectlGet<{ items: KubeObject[] }>(fixture, [
    'configmap',
    '-n',
    'default',
    '-l',
    'selected=yes',
  ]);
  t.ok(
    listed.items.some((o) => o.metadata.name === 'ed'),
    '--all and a selector reach the ConfigMap',
  );
  t.ok(
    listed.items.every((o) => o.metadata.labels?.['group'] === 'all'),
    'every ConfigMap got the label',
  );
}

async function replace(t: Test, fixture: ClusterFixture): Promise<void> {
  for (const [resource, printed, deleted] of [
    [
      'catalogsource',
      'catalogsource.operators.coreos.com/ed',
      'catalogsource.operators.coreos.com "ed" deleted',
    ],
    ['configmap', 'configmap/ed', 'configmap "ed" deleted'],
  ] as const) {
    // The object as read, relabelled: it names the resourceVersion it was read at.
    const object = await read(fixture, resource);
    const { managedFields: _managedFields, ...metadata } = object.metadata;
    const file = writeManifest(
      fixture,
      `replace-${resource}.json`,
      JSON.stringify({ ...object, metadata: { ...metadata, labels: { replaced: 'yes' } } }),
    );
    t.equal((await kubectlOk(fixture, ['replace', '-f', file])).trim(), `${printed} replaced`);
    const replaced = await read(fixture, resource);
    t.same(replaced.metadata.labels, { replaced: 'yes' }, 'the replacement is stored');
    // The file still names the resourceVersion it was read at: now stale.
    const stale = await kubectl(fixture, ['replace', '-f', file]);
    t.equal(stale.code, 1, 'a stale replace fails');
    t.match(
      stale.stderr,
      `Error from server (Conflict): error when replacing "${file}": Operation cannot be fulfilled on ${resource === 'configmap' ? 'configmaps' : 'catalogsources.operators.coreos.com'} "ed": the object has been modified; please apply your changes to the latest version and try again`,
    );
    const forced = await kubectl(fixture, ['replace', '--force', '-f', file]);
    t.equal(forced.code, 0, forced.stderr);
    t.equal(forced.stdout.trim(), `${deleted}\n${printed} replaced`);
    const recreated = await read(fixture, resource);
    t.not(recreated.metadata.resourceVersion, replaced.metadata.resourceVersion);
    t.same(recreated.metadata.labels, { replaced: 'yes' });
  }
}

forEachKubectl(
  (minor) => `devcluster kubectl 1.${minor} - edit, patch, label, annotate and replace`,
  async (t, fixture, minor) => {
    await installCatalogSourceCrd(fixture);
    await create(fixture);
    await t.test('edit with KUBE_EDITOR', (t) => edit(t, fixture));
    await t.test('patch: strategic, merge, json, --subresource=status', (t) => patch(t, fixture));
    await t.test('label and annotate', (t) => labels(t, fixture, minor));
    await t.test('replace, replace --force, a stale replace', (t) => replace(t, fixture));
  },
);
