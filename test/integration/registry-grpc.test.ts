// The registry gRPC server and client over the wire: a real server on a random port, olmq's
// client, and a plain @grpc/grpc-js client built from the .proto as an upstream client would.
import { createServer, type Server as NetServer } from 'node:net';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { buildCatalogIndex } from '../../shared/catalog/index.js';
import {
  fetchRegistryCatalog,
  probeRegistry,
  RegistryUnavailableError,
} from '../../shared/registry/client.js';
import { protoDirectory } from '../../shared/registry/protocol.js';
import {
  loadRegistryCatalog,
  startRegistryServer,
  type RunningRegistryServer,
} from '../../shared/registry/server.js';
import { smallCatalog } from '../harness/repo.js';

const small = smallCatalog;

async function serve(t: Test, dir = small): Promise<RunningRegistryServer> {
  const { catalog } = await loadRegistryCatalog(dir);
  const server = await startRegistryServer({ catalog, host: '127.0.0.1', port: 0 });
  t.teardown(() => server.stop(100));
  return server;
}

type Callback = (error: grpc.ServiceError | null, value?: unknown) => void;
type Stub = Record<string, (request: object, ...rest: unknown[]) => unknown> & grpc.Client;

// A client as any gRPC user writes one: the .proto, proto-loader's defaults, generated stubs.
function upstreamStyleClients(address: string): { registry: Stub; health: Stub } {
  const dir = protoDirectory();
  const definition = loadSync(['registry.proto', 'health.proto'], { includeDirs: [dir] });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    api: { Registry: grpc.ServiceClientConstructor };
    grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } };
  };
  const creds = grpc.credentials.createInsecure();
  return {
    registry: new loaded.api.Registry(address, creds) as unknown as Stub,
    health: new loaded.grpc.health.v1.Health(address, creds) as unknown as Stub,
  };
}

function call<T>(stub: Stub, method: string, request: object): Promise<T> {
  return new Promise((resolve, reject) => {
    (stub[method] as (r: object, cb: Callback) => void)(request, (error, value) =>
      error === null ? resolve(value as T) : reject(error),
    );
  });
}

function collect<T>(stub: Stub, method: string, request: object): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const out: T[] = [];
    const stream = (stub[method] as (r: object) => grpc.ClientReadableStream<T>)(request);
    stream.on('data', (m: T) => out.push(m));
    stream.on('error', reject);
    stream.on('end', () => resolve(out));
  });
}

t.test('registry grpc - the client rebuilds the same index as the directory (small)', async (t) => {
  const server = await serve(t);
  const direct = (await loadRegistryCatalog(small)).catalog.index;
  const objects = await fetchRegistryCatalog({ address: server.address, timeoutMs: 5_000 });
  const { index, warnings } = buildCatalogIndex(objects);
  t.same(warnings, []);
  t.same(index.packages, direct.packages, 'packages');
  t.same(
    index.channels.map((c) => [c.package, c.name, c.head]),
    direct.channels.map((c) => [c.package, c.name, c.head]),
    'channels and heads',
  );
  t.same(
    index.channels.map((c) => c.edges),
    direct.channels.map((c) => c.edges),
    'upgrade edges',
  );
  t.same(index.channels, direct.channels, 'channel entries');
  t.same(index.bundles, direct.bundles, 'bundles');
  const objectCount = (pkg: string, name: string) =>
    (
      (objects.find((o) => o.value['name'] === name && o.value['package'] === pkg)?.value[
        'properties'
      ] ?? []) as { type: string }[]
    ).filter((p) => p.type === 'olm.bundle.object').length;
  t.equal(objectCount('etcd', 'etcdoperator.v0.9.4'), 4, 'manifests fetched with GetBundle');
});

t.test('registry grpc - a plain grpc-js client reads packages, bundles and health', async (t) => {
  const server = await serve(t);
  const { registry, health } = upstreamStyleClients(server.address);
  t.teardown(() => {
    registry.close();
    health.close();
  });

  const names = await collect<{ name: string }>(registry, 'ListPackages', {});
  t.same(
    names.map((n) => n.name),
    [
      'etcd',
      'hawtio-operator',
      'node-healthcheck-operator',
      'node-maintenance-operator',
      'prometheus',
      'self-node-remediation',
    ],
  );

  const pkg = await call<{
    name: string;
    defaultChannelName: string;
    channels: { name: string; csvName: string }[];
  }>(registry, 'GetPackage', { name: 'etcd' });
  t.equal(pkg.defaultChannelName, 'singlenamespace-alpha');
  t.same(
    pkg.channels.map((c) => [c.name, c.csvName]),
    [
      ['alpha', 'etcdoperator.v0.6.1'],
      ['clusterwide-alpha', 'etcdoperator.v0.9.4-clusterwide'],
      ['singlenamespace-alpha', 'etcdoperator.v0.9.4'],
    ],
  );

  const bundle = await call<Record<string, unknown>>(registry, 'GetBundle', {
    pkgName: 'prometheus',
    channelName: 'beta',
    csvName: 'prometheusoperator.0.56.3',
  });
  t.equal(bundle['csvName'], 'prometheusoperator.0.56.3');
  t.equal(bundle['packageName'], 'prometheus');
  t.equal(bundle['channelName'], 'beta');
  t.match(
    bundle['bundlePath'],
    /^quay\.io\/community-operator-pipeline-prod\/prometheus:0\.56\.3$/,
  );
  t.equal(bundle['version'], '0.56.3');
  t.equal(JSON.parse(bundle['csvJson'] as string).kind, 'ClusterServiceVersion');
  const objects = bundle['object'] as string[];
  t.ok(objects.length > 1, 'the CSV and its CRDs');
  t.ok(
    objects.reduce((n, o) => n + o.length, 0) > 800_000,
    'a big bundle (about 900 KB of CRDs) crosses the wire whole',
  );
  t.ok(
    (bundle['providedApis'] as { kind: string }[]).some((a) => a.kind === 'Prometheus'),
    'providedApis',
  );
  t.ok(
    (bundle['properties'] as { type: string; value: string }[]).some(
      (p) => p.type === 'olm.package' && JSON.parse(p.value).version === '0.56.3',
    ),
    'properties carry JSON values',
  );

  const listed = await collect<Record<string, unknown>>(registry, 'ListBundles', {});
  t.equal(listed.length, 79, 'one message per channel entry (79 in small/)');
  // proto-loader without `defaults` leaves empty fields out.
  t.ok(
    listed.every(
      (b) => !b['csvJson'] && ((b['object'] as string[] | undefined) ?? []).length === 0,
    ),
    'bundles with an image come without manifests',
  );

  const head = await call<Record<string, unknown>>(registry, 'GetBundleForChannel', {
    pkgName: 'etcd',
    channelName: 'singlenamespace-alpha',
  });
  t.equal(head['csvName'], 'etcdoperator.v0.9.4');

  const replacing = await collect<Record<string, unknown>>(
    registry,
    'GetChannelEntriesThatReplace',
    {
      csvName: 'etcdoperator.v0.9.2',
    },
  );
  t.same(replacing, [
    {
      packageName: 'etcd',
      channelName: 'singlenamespace-alpha',
      bundleName: 'etcdoperator.v0.9.4',
      replaces: 'etcdoperator.v0.9.2',
    },
  ]);
  const provider = await call<Record<string, unknown>>(registry, 'GetDefaultBundleThatProvides', {
    group: 'etcd.database.coreos.com',
    version: 'v1beta2',
    kind: 'EtcdCluster',
  });
  t.equal(provider['csvName'], 'etcdoperator.v0.9.4');

  // proto-loader's default represents enums by number: SERVING = 1.
  t.same(await call(health, 'Check', { service: '' }), { status: 1 });
  t.same(await call(health, 'Check', { service: 'api.Registry' }), { status: 1 });
  await t.rejects(call(health, 'Check', { service: 'other.Service' }), {
    code: grpc.status.NOT_FOUND,
  });
});

t.test('registry grpc - unknown names answer NOT_FOUND with upstream wording', async (t) => {
  const server = await serve(t);
  const { registry, health } = upstreamStyleClients(server.address);
  t.teardown(() => {
    registry.close();
    health.close();
  });
  await t.rejects(call(registry, 'GetPackage', { name: 'nope' }), {
    code: grpc.status.NOT_FOUND,
    details: 'package "nope" not found',
  });
  await t.rejects(
    call(registry, 'GetBundle', { pkgName: 'etcd', channelName: 'stable', csvName: 'x' }),
    { code: grpc.status.NOT_FOUND, details: 'package "etcd", channel "stable" not found' },
  );
  await t.rejects(
    call(registry, 'GetBundleThatReplaces', {
      csvName: 'etcdoperator.v0.9.4',
      pkgName: 'etcd',
      channelName: 'singlenamespace-alpha',
    }),
    { code: grpc.status.NOT_FOUND },
  );
  await t.rejects(collect(registry, 'GetChannelEntriesThatReplace', { csvName: 'none.v0' }), {
    code: grpc.status.NOT_FOUND,
    details: 'no channel entries found that replace none.v0',
  });
  await t.rejects(
    collect(registry, 'GetLatestChannelEntriesThatProvide', {
      group: 'example.com',
      version: 'v1',
      kind: 'Nothing',
    }),
    { code: grpc.status.NOT_FOUND },
  );
});

// A port nothing listens on: bind, note the port, close.
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

t.test(
  'registry grpc - an unreachable registry is RegistryUnavailableError naming address and status',
  async (t) => {
    const address = `127.0.0.1:${await closedPort()}`;
    const error = await fetchRegistryCatalog({ address, timeoutMs: 3_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.type(error, RegistryUnavailableError);
    const e = error as RegistryUnavailableError;
    t.equal(e.address, address);
    t.equal(e.status, 'UNAVAILABLE');
    t.match(e.message, `registry ${address} is unavailable (ListPackages)`);
    t.match(e.message, /ECONNREFUSED/);
    const probe = await probeRegistry(address, 3_000);
    t.equal(probe.state, 'TRANSIENT_FAILURE');
    t.equal(probe.serving, false);
    t.match(probe.message, address);
  },
);

t.test('registry grpc - a peer that never answers times out after timeoutMs', async (t) => {
  // Accepts TCP connections and says nothing: no HTTP/2 settings ever arrive.
  const silent: NetServer = createServer(() => {});
  const sockets: { destroy(): void }[] = [];
  silent.on('connection', (s) => sockets.push(s));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  const address = `127.0.0.1:${(silent.address() as { port: number }).port}`;
  const started = Date.now();
  const error = await fetchRegistryCatalog({ address, timeoutMs: 500 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.type(error, RegistryUnavailableError);
  t.equal((error as RegistryUnavailableError).status, 'DEADLINE_EXCEEDED');
  t.match(
    (error as Error).message,
    `registry ${address} did not answer ListPackages within 500 ms`,
  );
  t.ok(Date.now() - started < 5_000, 'gave up near the deadline');
});

t.test('registry grpc - an aborted fetch stops with RegistryUnavailableError', async (t) => {
  const server = await serve(t);
  const controller = new AbortController();
  const pending = fetchRegistryCatalog({ address: server.address, signal: controller.signal });
  controller.abort(new Error('catalog function stopping'));
  const error = await pending.then(
    () => undefined,
    (e: unknown) => e,
  );
  t.type(error, RegistryUnavailableError);
  t.match((error as Error).message, 'was aborted');
});

t.test(
  'registry grpc - probe is READY while serving; stop turns health NOT_SERVING and closes',
  async (t) => {
    const { catalog } = await loadRegistryCatalog(join(small, 'etcd'));
    const server = await startRegistryServer({ catalog, host: '127.0.0.1', port: 0 });
    t.same(await probeRegistry(server.address), {
      state: 'READY',
      health: 'SERVING',
      serving: true,
      message: `registry ${server.address} is SERVING`,
    });
    const { health } = upstreamStyleClients(server.address);
    const seen: string[] = [];
    const watch = (health['Watch'] as (r: object) => grpc.ClientReadableStream<{ status: string }>)(
      {
        service: '',
      },
    );
    watch.on('data', (m) => seen.push(m.status));
    const ended = new Promise<void>((resolve) => {
      watch.on('end', resolve);
      watch.on('error', () => resolve());
    });
    await new Promise<void>((resolve) => watch.once('data', () => resolve()));
    await server.stop(1_000);
    await ended;
    health.close();
    t.same(seen, [1, 2], 'Watch hears SERVING, then NOT_SERVING at shutdown');
    t.equal((await probeRegistry(server.address, 1_000)).state, 'TRANSIENT_FAILURE');
  },
);

t.test(
  'registry grpc - a manifest cache spares GetBundle for unchanged bundles on the next poll',
  async (t) => {
    const calls: string[] = [];
    const logger = pino(
      { level: 'debug' },
      {
        write(line: string) {
          const method = (JSON.parse(line) as { method?: string }).method;
          if (method !== undefined) calls.push(method);
        },
      },
    );
    const { catalog } = await loadRegistryCatalog(join(small, 'etcd'));
    const server = await startRegistryServer({ catalog, host: '127.0.0.1', port: 0, logger });
    t.teardown(() => server.stop(100));
    const cache = new Map();
    const first = await fetchRegistryCatalog({ address: server.address, manifestCache: cache });
    t.equal(calls.filter((m) => m === 'GetBundle').length, 6, 'every bundle fetched once');
    t.equal(cache.size, 6);
    calls.length = 0;
    const second = await fetchRegistryCatalog({ address: server.address, manifestCache: cache });
    t.equal(calls.filter((m) => m === 'GetBundle').length, 0, 'nothing fetched again');
    t.same(
      second.map((o) => o.hash),
      first.map((o) => o.hash),
      'same objects',
    );
    cache.set('stale\u0000entry\u0000image', { base64: [], hash: '' });
    await fetchRegistryCatalog({ address: server.address, manifestCache: cache });
    t.equal(cache.size, 6, 'entries of bundles no longer listed are dropped');
  },
);
