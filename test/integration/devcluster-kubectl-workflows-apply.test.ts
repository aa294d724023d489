// kubectl apply workflows with every kubectl on the image, on a custom resource (CatalogSource)
// and built-in kinds (ConfigMap, Deployment): client-side apply of an edited file, the move to
// server-side apply and back, conflicts with another manager, and kubectl diff.
// Regressions: after client-side apply, `apply --server-side` of a changed file failed with a
// conflict with "kubectl-client-side-apply" (kube-apiserver forces fields the last-applied
// annotation owned), and kubectl's re-apply after migrating managedFields dropped whole maps
// (`spec` of the custom resource: "spec: Required value"; the annotations of the ConfigMap).
import type { Test } from 'tap';
import { kubectl, type ClusterFixture } from '../harness/devcluster.js';
import { forEachKubectl, kubectlOk } from '../harness/kubectl-suite.js';
import {
  catalogSourceYaml,
  configMapYaml,
  containerOf,
  deploymentYaml,
  installCatalogSourceCrd,
  lastApplied,
  managedBy,
  readObject,
  writeManifest,
  type KubeObject,
} from '../harness/kubectl-manifests.js';

/** One object the workflows run on: its manifests in order and what each stores. */
interface Subject {
  /** kubectl's resource argument, e.g. "configmap". */
  resource: string;
  /** The name kubectl prints, e.g. "configmap/settings". */
  printed: string;
  name: string;
  apiVersion: string;
  /** Manifest versions: [first apply, edited, server-side, client-side again, diffed]. */
  manifests: readonly [string, string, string, string, string];
  /** What each manifest version stores, as a check on the object read back. */
  stored: (t: Test, object: KubeObject, version: number) => void;
  /** The field the diff changes, as the unified diff prints it: [removed line, added line]. */
  diffLines: readonly [string, string];
  /** A field of the server-side manifest, as managedFields name it (kubectl owns it after migration). */
  appliedField: readonly string[];
  /** A merge patch another manager sends, changing a field of manifest 3, and that field's path. */
  intruder: readonly [Record<string, unknown>, string];
  /** Text of the first manifest's last-applied annotation that the edited one lacks. */
  removedToken: string;
}

const catalogSource: Subject = {
  resource: 'catalogsource',
  printed: 'catalogsource.operators.coreos.com/wf',
  name: 'wf',
  apiVersion: 'operators.coreos.com/v1alpha1',
  manifests: [
    catalogSourceYaml('wf', { image: 'img:v1', displayName: 'One', publisher: 'me' }),
    catalogSourceYaml('wf', { image: 'img:v2', displayName: 'One' }),
    catalogSourceYaml('wf', { image: 'img:v3', displayName: 'One' }),
    catalogSourceYaml('wf', { image: 'img:v4', displayName: 'One', priority: 5 }),
    catalogSourceYaml('wf', { image: 'img:v5', displayName: 'One', priority: 5 }),
  ],
  stored: (t, object, version) => {
    t.equal(object.spec?.['image'], `img:v${version + 1}`, 'spec.image');
    t.equal(object.spec?.['publisher'], version === 0 ? 'me' : undefined, 'spec.publisher');
    t.equal(object.spec?.['priority'], version >= 3 ? 5 : undefined, 'spec.priority');
    t.equal(object.spec?.['sourceType'], 'grpc', 'spec.sourceType is kept');
  },
  diffLines: ['-  image: img:v4', '+  image: img:v5'],
  appliedField: ['f:spec', 'f:image'],
  intruder: [{ spec: { image: 'intruder:1' } }, '.spec.image'],
  removedToken: '"publisher"',
};

const configMap: Subject = {
  resource: 'configmap',
  printed: 'configmap/wf',
  name: 'wf',
  apiVersion: 'v1',
  manifests: [
    configMapYaml('wf', { a: '1', b: '2' }),
    configMapYaml('wf', { a: '3' }),
    configMapYaml('wf', { a: '4' }),
    configMapYaml('wf', { a: '5', c: '6' }),
    configMapYaml('wf', { a: '7', c: '6' }),
  ],
  stored: (t, object, version) => {
    const expected = [
      { a: '1', b: '2' },
      { a: '3' },
      { a: '4' },
      { a: '5', c: '6' },
      { a: '7', c: '6' },
    ][version];
    t.same(object.data, expected, 'data');
  },
  diffLines: ['-  a: "5"', '+  a: "7"'],
  appliedField: ['f:data', 'f:a'],
  intruder: [{ data: { a: 'x' } }, '.data.a'],
  removedToken: '"b":',
};

const deployment: Subject = {
  resource: 'deployment',
  printed: 'deployment.apps/wf',
  name: 'wf',
  apiVersion: 'apps/v1',
  manifests: [
    deploymentYaml('wf', { replicas: 1, image: 'nginx:1', env: { A: '1' } }),
    deploymentYaml('wf', { replicas: 1, image: 'nginx:2' }),
    deploymentYaml('wf', { replicas: 2, image: 'nginx:2' }),
    deploymentYaml('wf', { replicas: 2, image: 'nginx:3', env: { B: '2' } }),
    deploymentYaml('wf', { replicas: 2, image: 'nginx:4', env: { B: '2' } }),
  ],
  stored: (t, object, version) => {
    const container = containerOf(object);
    t.equal(container['image'], `nginx:${[1, 2, 2, 3, 4][version]}`, 'container image');
    t.same(
      container['env'],
      version === 0
        ? [{ name: 'A', value: '1' }]
        : version >= 3
          ? [{ name: 'B', value: '2' }]
          : undefined,
      'container env',
    );
    t.equal(object.spec?.['replicas'], version >= 2 ? 2 : 1, 'spec.replicas');
  },
  diffLines: ['-        image: nginx:3', '+        image: nginx:4'],
  appliedField: ['f:spec', 'f:replicas'],
  intruder: [{ spec: { replicas: 5 } }, '.spec.replicas'],
  removedToken: '"env"',
};

const subjects = [catalogSource, configMap, deployment] as const;

async function read(fixture: ClusterFixture, s: Subject): Promise<KubeObject> {
  return readObject(fixture, s.resource, s.name);
}

// What changes with every write but the controllers' status updates (a Deployment's rollout).
function specVersion(object: KubeObject): string {
  return String(object.metadata.generation ?? object.metadata.resourceVersion);
}

function lastAppliedOf(object: KubeObject): Record<string, unknown> | undefined {
  const text = object.metadata.annotations?.[lastApplied];
  return text === undefined ? undefined : (JSON.parse(text) as Record<string, unknown>);
}

function owns(object: KubeObject, manager: string, path: readonly string[]): boolean {
  let node: unknown = managedBy(object, manager)?.fieldsV1;
  for (const element of path) node = (node as Record<string, unknown> | undefined)?.[element];
  return node !== undefined;
}

async function clientSideApply(t: Test, fixture: ClusterFixture, s: Subject): Promise<void> {
  const file = writeManifest(fixture, `${s.resource}.yaml`, s.manifests[0]);
  t.equal((await kubectlOk(fixture, ['apply', '-f', file])).trim(), `${s.printed} created`);
  s.stored(t, await read(fixture, s), 0);
  writeManifest(fixture, `${s.resource}.yaml`, s.manifests[1]);
  t.equal((await kubectlOk(fixture, ['apply', '-f', file])).trim(), `${s.printed} configured`);
  const edited = await read(fixture, s);
  s.stored(t, edited, 1);
  t.notMatch(
    edited.metadata.annotations?.[lastApplied],
    s.removedToken,
    'the annotation holds the edited file',
  );
  t.ok(managedBy(edited, 'kubectl-client-side-apply', 'Update'), 'client-side apply manages it');
  t.ok(
    owns(edited, 'kubectl-client-side-apply', ['f:metadata', 'f:annotations']),
    'owns the annotation',
  );
  t.equal((await kubectlOk(fixture, ['apply', '-f', file])).trim(), `${s.printed} unchanged`);
  t.equal(specVersion(await read(fixture, s)), specVersion(edited), 'nothing written');
}

async function serverSideAfterClientSide(
  t: Test,
  fixture: ClusterFixture,
  s: Subject,
): Promise<void> {
  const file = writeManifest(fixture, `${s.resource}.yaml`, s.manifests[2]);
  const applied = await kubectl(fixture, ['apply', '--server-side', '-f', file]);
  t.equal(applied.code, 0, applied.stderr);
  t.equal(applied.stdout.trim(), `${s.printed} serverside-applied`);
  t.notMatch(applied.stderr, /Warning/, 'the migration to server-side apply succeeds');
  const migrated = await read(fixture, s);
  s.stored(t, migrated, 2);
  t.notOk(managedBy(migrated, 'kubectl-client-side-apply'), 'client-side manager migrated away');
  t.ok(managedBy(migrated, 'kubectl', 'Apply'), 'kubectl applies it');
  t.ok(owns(migrated, 'kubectl', s.appliedField), `kubectl owns ${s.appliedField.join('.')}`);
  t.ok(
    owns(migrated, 'kubectl-last-applied', ['f:metadata', 'f:annotations', `f:${lastApplied}`]),
    'the last-applied annotation is kept by its own manager',
  );
  // kube-apiserver keeps the annotation of kubectl's server-side applies up to date.
  const annotation = lastAppliedOf(migrated);
  t.equal(annotation?.['apiVersion'], s.apiVersion);
  t.same(annotation?.['metadata'], { name: s.name, namespace: 'default' });

  // And back: client-side apply over server-side apply.
  writeManifest(fixture, `${s.resource}.yaml`, s.manifests[3]);
  t.equal((await kubectlOk(fixture, ['apply', '-f', file])).trim(), `${s.printed} configured`);
  const back = await read(fixture, s);
  s.stored(t, back, 3);
  t.ok(
    managedBy(back, 'kubectl-client-side-apply', 'Update'),
    'client-side apply manages it again',
  );
}

async function conflicts(t: Test, fixture: ClusterFixture, s: Subject): Promise<void> {
  // Another manager changes a field the file sets: server-side apply refuses to take it...
  const [patch, field] = s.intruder;
  await kubectlOk(fixture, [
    'patch',
    s.resource,
    s.name,
    '--type=merge',
    '--field-manager=intruder',
    '-p',
    JSON.stringify(patch),
  ]);
  const file = writeManifest(fixture, `${s.resource}.yaml`, s.manifests[3]);
  const refused = await kubectl(fixture, ['apply', '--server-side', '-f', file]);
  t.equal(refused.code, 1, 'the conflicting apply fails');
  t.match(
    refused.stderr,
    `Apply failed with 1 conflict: conflict with "intruder" using ${s.apiVersion}: ${field}\n`,
  );
  t.match(refused.stderr, 'command with the `--force-conflicts` flag');
  // ...unless forced.
  const forced = await kubectl(fixture, [
    'apply',
    '--server-side',
    '--force-conflicts',
    '-f',
    file,
  ]);
  t.equal(forced.code, 0, forced.stderr);
  t.equal(forced.stdout.trim(), `${s.printed} serverside-applied`);
  const taken = await read(fixture, s);
  s.stored(t, taken, 3);
  t.notOk(managedBy(taken, 'intruder'), 'the intruder lost the field');
}

async function diff(t: Test, fixture: ClusterFixture, s: Subject): Promise<void> {
  const file = writeManifest(fixture, `${s.resource}.yaml`, s.manifests[3]);
  const same = await kubectl(fixture, ['diff', '-f', file]);
  t.equal(same.code, 0, `no difference: ${same.stderr}`);
  t.equal(same.stdout, '');
  const before = await read(fixture, s);
  writeManifest(fixture, `${s.resource}.yaml`, s.manifests[4]);
  const changed = await kubectl(fixture, ['diff', '-f', file]);
  t.equal(changed.code, 1, `a difference: ${changed.stderr}`);
  const lines = changed.stdout.split('\n');
  t.ok(lines.includes(s.diffLines[0]), `diff removes ${s.diffLines[0]}`);
  t.ok(lines.includes(s.diffLines[1]), `diff adds ${s.diffLines[1]}`);
  // kubectl diff asks for a server-side dry run: nothing is stored.
  const after = await read(fixture, s);
  t.equal(specVersion(after), specVersion(before), 'nothing stored');
  s.stored(t, after, 3);
}

forEachKubectl(
  (minor) =>
    `devcluster kubectl 1.${minor} - apply workflows on a custom resource, a ConfigMap and a Deployment`,
  async (t, fixture) => {
    await installCatalogSourceCrd(fixture);
    for (const s of subjects) {
      await t.test(`${s.resource}: apply -f of an edited file`, (t) =>
        clientSideApply(t, fixture, s),
      );
      await t.test(`${s.resource}: apply --server-side after client-side apply, and back`, (t) =>
        serverSideAfterClientSide(t, fixture, s),
      );
      await t.test(`${s.resource}: a conflict with another manager, --force-conflicts`, (t) =>
        conflicts(t, fixture, s),
      );
      await t.test(`${s.resource}: diff -f`, (t) => diff(t, fixture, s));
    }
  },
);
