// Regression: `kubectl apply -f` of a changed custom resource failed with kubectl 1.29+
// ("strategic merge patch is not supported for custom resources") because the devcluster's
// /openapi/v3 offered strategic merge patch for CRD kinds; kubectl picks the patch type from
// it. Built-in kinds list none either: their published schemas are partial, and kubectl warned
// "error calculating patch from openapi v3 spec" on every apply of a changed ConfigMap or
// Deployment. Run with every kubectl the image carries (the dispatcher picks the one matching
// /version, so each gets a cluster reporting its minor version).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import {
  kubectl,
  kubectlMissing,
  rawRequest,
  startCluster,
  type ClusterFixture,
} from '../harness/devcluster.js';
import { kubectlMinors } from '../harness/kubectl-versions.js';
import { repoRoot } from '../harness/repo.js';

async function run(fixture: ClusterFixture, args: string[]): Promise<string> {
  const result = await kubectl(fixture, args);
  if (result.code !== 0)
    throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

const catalogSource = (image: string): string =>
  `apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: reapplied
  namespace: default
spec:
  sourceType: grpc
  image: ${image}
  displayName: Reapplied
`;

const subscription = (channel: string): string =>
  `apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: reapplied
  namespace: default
spec:
  name: example-operator
  source: reapplied
  sourceNamespace: default
  channel: ${channel}
`;

/** Built-in kinds whose apply kubectl patches strategically (containers merged by name). */
const builtinCases = [
  {
    resource: 'configmap',
    manifest: (value: string): string =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: reapplied\n  namespace: default\ndata:\n  key: ${value}\n`,
  },
  {
    resource: 'deployment.apps',
    manifest: (value: string): string => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: reapplied
  namespace: default
spec:
  selector:
    matchLabels: { app: reapplied }
  template:
    metadata:
      labels: { app: reapplied }
    spec:
      containers:
        - name: main
          image: busybox
          env:
            - { name: VALUE, value: ${value} }
`,
  },
] as const;

const cases = [
  {
    resource: 'catalogsource',
    manifest: catalogSource,
    values: ['quay.io/example/catalog:v1', 'quay.io/example/catalog:v2'],
    field: 'image',
  },
  {
    resource: 'subscription',
    manifest: subscription,
    values: ['stable', 'fast'],
    field: 'channel',
  },
] as const;

/** The request body content types of each PATCH operation in one /openapi/v3 document. */
async function patchContentTypes(
  fixture: ClusterFixture,
  groupVersion: string,
): Promise<Record<string, string[]>> {
  const index = JSON.parse((await rawRequest(fixture, 'GET', '/openapi/v3')).body) as {
    paths: Record<string, { serverRelativeURL: string }>;
  };
  const url = index.paths[groupVersion]?.serverRelativeURL ?? `/openapi/v3/${groupVersion}`;
  const document = JSON.parse((await rawRequest(fixture, 'GET', url)).body) as {
    paths: Record<string, { patch?: { requestBody?: { content?: Record<string, unknown> } } }>;
  };
  return Object.fromEntries(
    Object.entries(document.paths).flatMap(([path, item]) =>
      item.patch === undefined ? [] : [[path, Object.keys(item.patch.requestBody?.content ?? {})]],
    ),
  );
}

void t.test(
  'devcluster openapi - PATCH lists no strategic merge patch: kubectl builds it from its own types',
  async (t) => {
    const fixture = await startCluster();
    t.teardown(() => fixture.close());
    const created = await kubectl(fixture, [
      'apply',
      '-f',
      join(repoRoot, 'crds', 'operators.coreos.com_catalogsources.yaml'),
    ]);
    t.equal(created.code, 0, created.stderr);
    const catalogSources =
      '/apis/operators.coreos.com/v1alpha1/namespaces/{namespace}/catalogsources/{name}';
    t.same(await patchContentTypes(fixture, 'apis/operators.coreos.com/v1alpha1'), {
      [catalogSources]: [
        'application/apply-patch+yaml',
        'application/json-patch+json',
        'application/merge-patch+json',
      ],
      [`${catalogSources}/status`]: [
        'application/apply-patch+yaml',
        'application/json-patch+json',
        'application/merge-patch+json',
      ],
    });
    const configMaps = (await patchContentTypes(fixture, 'api/v1'))[
      '/api/v1/namespaces/{namespace}/configmaps/{name}'
    ];
    t.same(configMaps, [
      'application/apply-patch+yaml',
      'application/json-patch+json',
      'application/merge-patch+json',
    ]);
  },
);

const missing = kubectlMissing();
const minors = kubectlMinors();
if (missing !== undefined) t.fail(missing);
else if (minors.length === 0) t.fail('no kubectl.1.N binaries beside kubectl on PATH');
else {
  for (const minor of minors) {
    void t.test(
      `devcluster kubectl 1.${minor} - apply -f of a changed custom resource says configured`,
      async (t) => {
        const fixture = await startCluster({ kubernetesVersion: `v1.${minor}.0` });
        t.teardown(() => fixture.close());
        // The dispatcher answers for its own minor itself ("32+"), and runs kubectl.1.N for the others.
        const version = JSON.parse(await run(fixture, ['version', '-o', 'json'])) as {
          clientVersion: { minor: string };
        };
        t.equal(Number.parseInt(version.clientVersion.minor, 10), minor, `kubectl 1.${minor} runs`);
        for (const crd of ['catalogsources', 'subscriptions'])
          await run(fixture, [
            'apply',
            '-f',
            join(repoRoot, 'crds', `operators.coreos.com_${crd}.yaml`),
          ]);
        await run(fixture, [
          'wait',
          '--for=condition=Established',
          '--timeout=30s',
          'crd/catalogsources.operators.coreos.com',
          'crd/subscriptions.operators.coreos.com',
        ]);
        for (const c of cases) {
          const file = join(fixture.dir, `${c.resource}.yaml`);
          const name = `${c.resource}.operators.coreos.com/reapplied`;
          const [before, after] = c.values;
          writeFileSync(file, c.manifest(before));
          t.equal((await run(fixture, ['apply', '-f', file])).trim(), `${name} created`);
          writeFileSync(file, c.manifest(after));
          const second = await kubectl(fixture, ['apply', '-f', file]);
          t.equal(second.code, 0, `second apply of the ${c.resource}: ${second.stderr}`);
          t.equal(second.stdout.trim(), `${name} configured`);
          const stored = JSON.parse(
            await run(fixture, ['get', c.resource, 'reapplied', '-n', 'default', '-o', 'json']),
          ) as { spec: Record<string, unknown> };
          t.equal(stored.spec[c.field], after, `the ${c.resource} carries the change`);
          t.equal((await run(fixture, ['apply', '-f', file])).trim(), `${name} unchanged`);
        }
        for (const b of builtinCases) {
          const file = join(fixture.dir, `${b.resource}.yaml`);
          writeFileSync(file, b.manifest('one'));
          t.equal(
            (await run(fixture, ['apply', '-f', file])).trim(),
            `${b.resource}/reapplied created`,
          );
          writeFileSync(file, b.manifest('two'));
          const second = await kubectl(fixture, ['apply', '-f', file]);
          t.equal(second.code, 0, `second apply of the ${b.resource}`);
          t.equal(second.stdout.trim(), `${b.resource}/reapplied configured`);
          t.equal(
            second.stderr,
            '',
            `kubectl 1.${minor} warns of nothing re-applying a ${b.resource}`,
          );
          const stored = await run(fixture, [
            'get',
            b.resource,
            'reapplied',
            '-n',
            'default',
            '-o',
            'json',
          ]);
          t.match(stored, 'two', `the ${b.resource} carries the change`);
        }
      },
    );
  }
}
