// olmq on a secured NATS: a real nats-server with TLS (client certificates verified) and one user
// per component with the permissions of k8s/nats-server.conf (cli/nats-config.ts). The watcher
// and every function connect as their own user, and a Subscription installs; a component whose
// user lacks a subject fails with an error naming the subject and the user.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { componentUsers } from '../../cli/nats-config.js';
import { functionModules, functionNames } from '../../functions/index.js';
import { openBackbone } from '../../shared/bus/backbone.js';
import {
  fetchCatalogIndex,
  openCatalogStore,
  readCatalogIndexRecords,
} from '../../shared/handoff/catalog-store.js';
import {
  componentPermissions,
  inboxPrefixOf,
  renderAuthorization,
} from '../../shared/bus/permissions.js';
import { createFunctionMetrics, createRegistry } from '../../shared/runtime/metrics.js';
import { startFunctions, stopFunctions } from '../../system/functions.js';
import { connectNats, natsProblem, type NatsConnectionSettings } from '../../system/nats.js';
import { runOlmq } from '../harness/cli.js';
import { capturingLogger } from '../harness/log.js';
import { natsServerFor } from '../harness/nats.js';
import { communityCatalogFor, etcdSucceeded, subscribeEtcd } from '../harness/subscription.js';
import { systemFor } from '../harness/system.js';
import { tlsFilesFor, type TlsFiles } from '../harness/tls.js';

const password = (user: string): string => `secret-${user}`;

// A user that may do what the package server may (read the mirror and catalogs) but is used to
// run a function: the first subject it lacks must be named.
const limitedUser = 'olmq-limited';

async function securedServer(t: Test, tls: TlsFiles) {
  const readOnly = componentPermissions({
    name: 'olmq-plan',
    queues: [],
    mirrorRecordKinds: [],
    watcher: false,
    catalogWriter: false,
    bundleWriter: false,
  });
  const config = [
    'tls {',
    `  cert_file: ${JSON.stringify(tls.serverCertFile)}`,
    `  key_file: ${JSON.stringify(tls.serverKeyFile)}`,
    `  ca_file: ${JSON.stringify(tls.caFile)}`,
    '  verify: true',
    '}',
    renderAuthorization([
      ...componentUsers(password),
      { user: limitedUser, password: password(limitedUser), permissions: readOnly },
    ]),
  ].join('\n');
  const configFile = join(tls.dir, 'nats-server.conf');
  writeFileSync(configFile, config);
  return natsServerFor(t, { configFile });
}

const settingsFor = (
  url: string,
  tls: TlsFiles,
  user: string,
  component = user,
): NatsConnectionSettings => ({
  servers: [url],
  user,
  password: password(user),
  tlsCaFile: tls.caFile,
  tlsCertFile: tls.clientCertFile,
  tlsKeyFile: tls.clientKeyFile,
  inboxPrefix: inboxPrefixOf(component),
});

t.test(
  'nats security - with TLS and one user per component, a Subscription installs',
  async (t) => {
    const tls = tlsFilesFor(t);
    const server = await securedServer(t, tls);
    const { log, lines } = capturingLogger('warn');
    // The devcluster and the watcher (with the backbone's streams), as the watcher's user.
    const { system, client } = await systemFor(t, {
      log,
      nats: settingsFor(server.url, tls, 'olmq-watcher'),
      backbone: { leaseTtlMs: 2_000 },
      watcher: { identity: 'test-watcher', leaseName: 'olmq-watcher' },
      functions: { names: [] },
    });
    // Every function in its own connection, as its own user.
    const registry = createRegistry();
    const metrics = createFunctionMetrics(registry);
    for (const name of functionNames) {
      const fnLog = log.child({ function: name });
      const nc = await connectNats(
        settingsFor(server.url, tls, `olmq-${name}`),
        `olmq-${name}`,
        fnLog,
      );
      t.teardown(() => nc.close());
      const backbone = await openBackbone(nc, { leaseTtlMs: 2_000 });
      const running = await startFunctions([name], functionModules, {
        backbone,
        clients: new Map([[system.cluster.id, client]]),
        log: fnLog,
        registry: system.registry,
        metrics,
        globalCatalogNamespace: 'olm',
        host: { baseBackoffMs: 20, contentionDelayMs: 20 },
      });
      t.teardown(() => stopFunctions(running, 1_000));
      t.equal(natsProblem(nc), '', `${name}: no permission refused so far`);
    }
    await communityCatalogFor(t, client);
    await subscribeEtcd(client, 'secured');
    await etcdSucceeded(client, 'secured');
    // The package server's user reads the catalogs it serves, and may not write the mirror.
    const reader = await connectNats(
      settingsFor(server.url, tls, 'olmq-packageserver'),
      'olmq-packageserver',
      log,
    );
    t.teardown(() => reader.close());
    const readOnly = await openBackbone(reader);
    const [record] = await readCatalogIndexRecords(readOnly, system.cluster.id, ['olm']);
    t.equal(record?.name, 'community');
    const digest = record?.digest ?? '';
    const index = await fetchCatalogIndex(await openCatalogStore(readOnly), digest);
    t.ok(index.packages.length > 0, 'the package server reads the catalog content');
    await t.rejects(
      readOnly.objects.put('c1.ConfigMap.olm.forged', '{}'),
      /Permissions Violation for Publish to "\$KV\.olmq_objects\.c1\.ConfigMap\.olm\.forged"/,
    );
    t.match(natsProblem(reader), /NATS denies user "olmq-packageserver" permission to publish/);
    const refused = lines.filter((l) => l['nats'] === 'permission' && l['function'] !== undefined);
    t.same(refused, [], 'neither the watcher nor any function was refused a subject');
  },
);

t.test('nats security - a wrong password is refused at connect, naming the user', async (t) => {
  const tls = tlsFilesFor(t);
  const server = await securedServer(t, tls);
  const { log } = capturingLogger('warn');
  const settings = { ...settingsFor(server.url, tls, 'olmq-watcher'), password: 'wrong' };
  await t.rejects(connectNats(settings, 'olmq-watcher', log), {
    name: 'NatsConnectError',
    message: /refused user "olmq-watcher"/,
  });
});

t.test(
  'nats security - a function whose user lacks a subject exits 1 naming subject and user',
  async (t) => {
    const tls = tlsFilesFor(t);
    const server = await securedServer(t, tls);
    // The streams exist (the watcher made them), so the function gets as far as its consumers.
    const { log } = capturingLogger('warn');
    const admin = await connectNats(settingsFor(server.url, tls, 'olmq-watcher'), 'admin', log);
    t.teardown(() => admin.close());
    await openBackbone(admin);
    const { fixture } = await systemFor(t, {
      log,
      natsUrl: undefined,
      watcher: false,
      functions: { names: [] },
    });
    const outcome = await runOlmq(
      [
        'run',
        'plan',
        '--kubeconfig',
        fixture.kubeconfigPath,
        '--metrics-port',
        '0',
        '--nats-url',
        server.url,
        '--nats-user',
        limitedUser,
        '--nats-tls-ca',
        tls.caFile,
        '--nats-tls-cert',
        tls.clientCertFile,
        '--nats-tls-key',
        tls.clientKeyFile,
      ],
      { ...process.env, NATS_PASSWORD: password(limitedUser) },
    );
    t.equal(outcome.code, 1, outcome.stderr);
    t.match(
      outcome.stderr,
      /olmq run plan: NATS denies user "olmq-limited" permission to publish "\$JS\.API\.(CONSUMER|STREAM)\.[A-Z]+\.[^"]*"/,
    );
  },
);
