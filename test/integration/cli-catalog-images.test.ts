// The offline commands with catalog images on a real local registry, as child processes:
// `olmq resolve --catalog NAME=IMAGE` resolves against the pulled catalog, `olmq registry serve
// --image REF` serves it; a bad reference, a missing image and a 401 exit 2 naming the flag.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { fetchRegistryCatalog } from '../../shared/registry/client.js';
import { runOlmq as olmq, startOlmq } from '../harness/cli.js';
import { pushCatalogImage } from '../harness/images.js';
import { registryFor } from '../harness/registry.js';
import { smallCatalog } from '../harness/repo.js';

const dir = await mkdtemp(join(tmpdir(), 'olmq-cli-images-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const subs = join(dir, 'subs.yaml');
await writeFile(
  subs,
  `apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: etcd, namespace: team}
spec: {name: etcd, channel: singlenamespace-alpha, source: images, sourceNamespace: olm}
`,
);

t.test('cli catalog images - resolve --catalog NAME=IMAGE', async (t) => {
  const registry = await registryFor(t);
  const pushed = await pushCatalogImage(registry, smallCatalog, { packages: ['etcd'] });
  const ok = await olmq([
    'resolve',
    '--catalog',
    `images=${pushed.image}`,
    '--subscriptions',
    subs,
    '-o',
    'json',
  ]);
  t.equal(ok.code, 0, ok.stderr);
  const out = JSON.parse(ok.stdout) as { bundles: { name: string; catalog: string }[] };
  t.same(
    out.bundles.map((b) => [b.name, b.catalog]),
    [['etcdoperator.v0.9.4', 'images']],
  );

  const missing = `${registry.host}/olmq-test/nothing:v1`;
  const notFound = await olmq([
    'resolve',
    '--catalog',
    `images=${missing}`,
    '--subscriptions',
    subs,
  ]);
  t.equal(notFound.code, 2);
  t.match(
    notFound.stderr,
    `olmq resolve: --catalog images=${missing}: failed to pull catalog image ${missing}: manifest ${missing}`,
  );
  const badRef = await olmq([
    'resolve',
    '--catalog',
    'images=Registry.Example/UPPER:v1',
    '--subscriptions',
    subs,
  ]);
  t.equal(badRef.code, 2);
  t.match(badRef.stderr, /--catalog images=Registry\.Example\/UPPER:v1: invalid image reference/);
});

t.test('cli catalog images - registry serve --image, and its errors', async (t) => {
  const registry = await registryFor(t, { htpasswd: true });
  const pushed = await pushCatalogImage(registry, smallCatalog, { packages: ['etcd'] });
  const refused = await olmq(['registry', 'serve', '--image', pushed.image, '--port', '0']);
  t.equal(refused.code, 2);
  t.match(
    refused.stderr,
    `olmq registry serve: --image: failed to pull catalog image ${pushed.image}: manifest ${pushed.image}: registry ${registry.host} requires credentials (401)`,
  );
  const both = await olmq(['registry', 'serve', '--image', pushed.image, '--fbc', smallCatalog]);
  t.equal(both.code, 2);
  t.match(both.stderr, 'give exactly one of --fbc DIR and --image REF');

  const auth = Buffer.from(`${registry.username ?? ''}:${registry.password ?? ''}`).toString(
    'base64',
  );
  const authFile = join(dir, 'auth.json');
  await writeFile(authFile, JSON.stringify({ auths: { [registry.host]: { auth } } }));
  const serve = await startOlmq(
    t,
    [
      'registry',
      'serve',
      '--image',
      pushed.image,
      '--registry-auth-file',
      authFile,
      '--port',
      '0',
      '--host',
      '127.0.0.1',
    ],
    /serving api\.Registry on (127\.0\.0\.1:\d+)/,
  );
  const address = serve.match[1] ?? '';
  t.match(serve.output(), `(${pushed.image}: 1 packages`);
  const objects = await fetchRegistryCatalog({ address });
  t.ok(
    objects.some((o) => o.schema === 'olm.package' && o.value['name'] === 'etcd'),
    'serves the etcd package of the image',
  );
});
