// startSystem: the whole of olmq wired in one process, as `olmq up` runs it and as the tests and
// benchmarks drive it — the cluster (a kubeconfig's, or the embedded devcluster), NATS (a given
// server, or a local nats-server), the backbone, the OLM API, the watcher, the functions and the
// package server, stopped in the reverse order.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { startDevcluster, type Devcluster } from '../devcluster/index.js';
import { functionModules } from '../functions/index.js';
import {
  registerPackageApi,
  startPackageServer,
  type PackageServer,
} from '../packageserver/index.js';
import { openBackbone } from '../shared/bus/backbone.js';
import { LiveMirrorCopy } from '../shared/bus/mirror-copy.js';
import { startNatsServer, type NatsServer } from '../shared/bus/nats-server.js';
import { startUpkeep } from '../shared/bus/upkeep.js';
import type { KubeClient } from '../shared/kube/client.js';
import { KubeconfigError, loadClusters } from '../shared/kube/clusters.js';
import { isAlreadyExists } from '../shared/kube/errors.js';
import { ensureOlmApi } from '../shared/kube/olm-api.js';
import { createFunctionMetrics, createNatsMessageCounter } from '../shared/runtime/metrics.js';
import { startWatcher, type Watcher } from '../watcher/index.js';
import { clientsFor, drainGraceMs, startFunctions, stopFunctions } from './functions.js';
import { connectNats } from './nats.js';
import type { System, SystemOptions } from './types.js';

/** The steps that undo a start, run last first; each failure is logged, the first thrown. */
class Teardown {
  private readonly steps: { part: string; stop: () => Promise<void> | void }[] = [];
  private done: Promise<void> | undefined;

  constructor(private readonly log: Logger) {}

  /** `part` names what `stop` stops, for the log. */
  add(part: string, stop: () => Promise<void> | void): void {
    this.steps.push({ part, stop });
  }

  run(): Promise<void> {
    this.done ??= (async () => {
      let first: { error: unknown } | undefined;
      for (const { part, stop } of this.steps.reverse()) {
        const started = performance.now();
        // A step that holds the shutdown up says so while it runs: a supervisor's grace period
        // may end (and SIGKILL) before it would have said anything.
        const slow = setInterval(
          () =>
            this.log.info(
              { part, waitingMs: Math.round(performance.now() - started) },
              'still stopping',
            ),
          2_000,
        );
        try {
          await stop();
          this.log.debug({ part, ms: Math.round(performance.now() - started) }, 'stopped');
        } catch (error) {
          this.log.warn({ err: error, part }, 'shutdown step failed');
          first ??= { error };
        } finally {
          clearInterval(slow);
        }
      }
      if (first !== undefined) throw first.error;
    })();
    return this.done;
  }
}

/**
 * Starts every part `options` asks for and resolves once the watcher (if any) has mirrored its
 * first lists and every function runs. When a part fails to start, those already started are
 * stopped and the error is thrown: a KubeconfigError for an unusable kubeconfig, a
 * FunctionStartError for a function that would not start.
 */
export async function startSystem(options: SystemOptions): Promise<System> {
  const { log } = options;
  const globalCatalogNamespace = options.globalCatalogNamespace ?? 'olm';
  if (options.packageServer === true && options.kubeconfig !== undefined)
    throw new Error('the package server runs in-process only beside the embedded devcluster');
  const teardown = new Teardown(log);
  try {
    const { cluster, kubeconfigPath, devcluster } = await openCluster(options, teardown);
    const { natsServer, natsUrl, nc } = await openNats(options, teardown);
    const backbone = await openBackbone(nc, options.backbone ?? {});

    // The OLM API, and the namespaces olmq and the global catalogs live in.
    const registry = options.registry ?? new Registry();
    createNatsMessageCounter(registry, () => nc.stats());
    const clients = await clientsFor([cluster], registry, options.client?.userAgent ?? 'olmq', {
      ...(options.client?.qps === undefined ? {} : { qps: options.client.qps }),
      ...(options.client?.burst === undefined ? {} : { burst: options.client.burst }),
      ...(options.client?.transientRetryWindowMs === undefined
        ? {}
        : { transientRetryWindowMs: options.client.transientRetryWindowMs }),
    });
    const client = clients.get(cluster.id);
    if (client === undefined) throw new Error(`no API client for cluster ${cluster.id}`);
    teardown.add('Kubernetes client', () => client.close());
    await ensureOlmApi(client);
    for (const name of new Set(options.namespaces ?? ['olmq-system', globalCatalogNamespace]))
      await ensureNamespace(client, name);

    let watcher: Watcher | undefined;
    if (options.watcher !== false) {
      const settings = options.watcher ?? {};
      const started = await startWatcher({
        cluster,
        backbone,
        log,
        registry: settings.registry ?? registry,
        identity: settings.identity ?? `${hostname()}-${process.pid}`,
        leaseNamespace: settings.leaseNamespace ?? 'olmq-system',
        leaseName: settings.leaseName ?? `olmq-watcher-${cluster.id}`.slice(0, 63),
        leaseDurationSeconds: settings.leaseDurationSeconds ?? 15,
        ...(settings.kinds === undefined ? {} : { kinds: settings.kinds }),
        stallTimeoutMs: settings.stallTimeoutMs,
        resyncMs: settings.resyncMs,
      });
      watcher = started;
      teardown.add('watcher', () => started.stop());
      await started.synced();
      const upkeep = startUpkeep(backbone, {
        log,
        registry: settings.registry ?? registry,
        purgeDeletesAfterMs: options.purgeDeletesAfterMs ?? 3_600_000,
      });
      teardown.add('stream upkeep', () => upkeep.stop());
    }

    // The functions, sharing the process's connection, client and metrics, and reading the
    // mirror through one live copy of it, which follows a cluster once they first read it
    // (stopped after them: teardown runs in reverse). Run alone, rbac and copy-csv keep no copy
    // (functions/index.ts: following every change would cost them more than their reads save);
    // here the copy follows every change for the functions on the Subscription path anyway, so
    // theirs cost only the memory of the kinds they read, instead of a direct get per object.
    const copy = new LiveMirrorCopy(backbone);
    teardown.add('mirror copy', () => copy.stop());
    const table = options.functions?.table ?? functionModules;
    const names = options.functions?.names ?? Object.keys(table);
    const functions = await startFunctions(
      names,
      table,
      {
        backbone,
        clients,
        log,
        registry,
        metrics: createFunctionMetrics(registry),
        globalCatalogNamespace,
        host: options.functions?.host ?? {},
      },
      { copy, readers: new Set(names) },
    );
    const graceMs = options.functions?.stopGraceMs ?? drainGraceMs;
    teardown.add('functions', () => stopFunctions(functions, graceMs, clients));

    // PackageManifests: an aggregated API the devcluster reaches at 127.0.0.1; on a real
    // cluster the packageserver Deployment (k8s/) serves them.
    let packageServer: PackageServer | undefined;
    if (options.packageServer === true) {
      const started = await startPackageServer({
        backbone,
        cluster: cluster.id,
        client,
        log: log.child({ component: 'packageserver' }),
        globalNamespace: globalCatalogNamespace,
      });
      packageServer = started;
      teardown.add('package server', () => started.close());
      await registerPackageApi(client, started);
    }

    return {
      cluster,
      kubeconfigPath,
      devcluster,
      natsServer,
      natsUrl,
      nc,
      backbone,
      client,
      registry,
      watcher,
      functions,
      packageServer,
      stop: () => teardown.run(),
    };
  } catch (error) {
    await teardown.run().catch(() => undefined);
    throw error;
  }
}

/** The cluster: the given kubeconfig's first context, or the embedded devcluster. */
async function openCluster(
  options: SystemOptions,
  teardown: Teardown,
): Promise<Pick<System, 'cluster' | 'kubeconfigPath' | 'devcluster'>> {
  let kubeconfigPath = options.kubeconfig === undefined ? undefined : resolve(options.kubeconfig);
  let devcluster: Devcluster | undefined;
  if (kubeconfigPath === undefined) {
    const dataDir =
      options.dataDir === undefined ? undefined : join(resolve(options.dataDir), 'devcluster');
    if (dataDir !== undefined) await mkdir(dataDir, { recursive: true });
    const started = await startDevcluster({
      ...(options.devclusterPort === undefined ? {} : { port: options.devclusterPort }),
      ...(options.podReadyDelayMs === undefined
        ? {}
        : { podReadyDelayMs: options.podReadyDelayMs }),
      ...(dataDir === undefined ? {} : { dataDir }),
      logger: options.log.child({ component: 'devcluster' }),
    });
    devcluster = started;
    teardown.add('devcluster', () => started.close());
    kubeconfigPath = await kubeconfigFile(options.kubeconfigOut, teardown);
    await started.writeKubeconfig(kubeconfigPath);
  }
  const [cluster] = loadClusters({
    path: kubeconfigPath,
    context: undefined,
    clusterId: options.clusterId,
  });
  if (cluster === undefined)
    throw new KubeconfigError(`kubeconfig ${kubeconfigPath} has no context`);
  return { cluster, kubeconfigPath, devcluster };
}

/** NATS: the given server, or a local nats-server keeping its data beside the devcluster's. */
async function openNats(
  options: SystemOptions,
  teardown: Teardown,
): Promise<Pick<System, 'natsServer' | 'natsUrl' | 'nc'>> {
  let natsServer: NatsServer | undefined;
  const given = options.nats?.servers ?? options.natsUrl?.split(',');
  if (given === undefined) {
    const storeDir =
      options.dataDir === undefined ? undefined : join(resolve(options.dataDir), 'nats');
    if (storeDir !== undefined) await mkdir(storeDir, { recursive: true });
    const started = await startNatsServer({
      ...(storeDir === undefined ? {} : { storeDir }),
      ...(options.natsMonitoring === true ? { monitoring: true } : {}),
    });
    natsServer = started;
    teardown.add('nats-server', () => started.stop());
  }
  const servers = natsServer === undefined ? (given ?? []) : [natsServer.url];
  const nc = await connectNats(
    { ...options.nats, servers },
    options.connectionName ?? 'olmq',
    options.log,
  );
  const natsUrl = servers.join(',');
  teardown.add('NATS connection', () => nc.close());
  return { natsServer, natsUrl, nc };
}

/** Creates namespace `name` unless it exists. */
async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  await client
    .create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })
    .catch((error: unknown) => {
      if (!isAlreadyExists(error)) throw error;
    });
}

/** The devcluster kubeconfig's path: the one asked for, or one in a temp dir removed on stop. */
async function kubeconfigFile(asked: string | undefined, teardown: Teardown): Promise<string> {
  if (asked !== undefined) {
    const path = resolve(asked);
    await mkdir(dirname(path), { recursive: true });
    return path;
  }
  const dir = await mkdtemp(join(tmpdir(), 'olmq-system-'));
  teardown.add('kubeconfig file', () => rm(dir, { recursive: true, force: true }));
  return join(dir, 'kubeconfig');
}
