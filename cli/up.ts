// `olmq up` (what `npm start` runs): the whole system on one machine — the embedded devcluster
// (unless --kubeconfig names a cluster), a local nats-server (unless NATS_URL is given), the OLM
// API installed, the watcher, and every function of this build (functions/index.ts), all in this
// one process, each hosted exactly as `olmq run <function>` hosts it (./functions.ts).
import { hostname } from 'node:os';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { startDevcluster, type Devcluster } from '../devcluster/index.js';
import { registerPackageApi, startPackageServer } from '../packageserver/index.js';
import { startWatcher } from '../watcher/index.js';
import { openBackbone } from '../shared/bus/backbone.js';
import { startNatsServer, type NatsServer } from '../shared/bus/nats-server.js';
import { KubeClient } from '../shared/kube/client.js';
import { KubeconfigError, loadClusters } from '../shared/kube/clusters.js';
import { isAlreadyExists } from '../shared/kube/errors.js';
import { ensureOlmApi } from '../shared/kube/olm-api.js';
import { serveOperations } from '../shared/runtime/http.js';
import { createLogger } from '../shared/runtime/log.js';
import { FunctionStartError } from '../shared/runtime/function-runner.js';
import {
  createApiRequestCounter,
  createFunctionMetrics,
  createRegistry,
} from '../shared/runtime/metrics.js';
import { exitCodes, olmqVersion, type CommandConfig } from './commands.js';
import { builtInFunctions, startFunctions, stopFunctions } from './functions.js';
import { connectNats, untilSignal } from './lifecycle.js';

/** Starts everything, prints how to use it, and runs until SIGTERM/SIGINT. */
export async function runUp(config: CommandConfig<'up'>): Promise<number> {
  const log = createLogger('up', config.logLevel);
  const dataDir = resolve(config.dataDir);
  const stops: (() => Promise<void>)[] = [];
  const shutdown = async (): Promise<void> => {
    for (const stop of stops.reverse())
      await stop().catch((error: unknown) => log.warn({ err: error }, 'shutdown step failed'));
  };
  try {
    // The cluster: the given kubeconfig, or the embedded devcluster.
    let kubeconfigPath = config.kubeconfig === undefined ? undefined : resolve(config.kubeconfig);
    let devcluster: Devcluster | undefined;
    if (kubeconfigPath === undefined) {
      await mkdir(join(dataDir, 'devcluster'), { recursive: true });
      devcluster = await startDevcluster({
        port: config.port,
        dataDir: join(dataDir, 'devcluster'),
        logger: log.child({ component: 'devcluster' }),
      });
      stops.push(() => devcluster?.close() ?? Promise.resolve());
      kubeconfigPath = resolve(config.kubeconfigOut);
      await mkdir(dirname(kubeconfigPath), { recursive: true });
      await devcluster.writeKubeconfig(kubeconfigPath);
    }
    const [cluster] = loadClusters({
      path: kubeconfigPath,
      context: undefined,
      clusterId: undefined,
    });
    if (cluster === undefined)
      throw new KubeconfigError(`kubeconfig ${kubeconfigPath} has no context`);

    // NATS: the given server, or a local nats-server keeping its data beside the devcluster's.
    let nats: NatsServer | undefined;
    if (config.natsUrl === undefined) {
      await mkdir(join(dataDir, 'nats'), { recursive: true });
      nats = await startNatsServer({ storeDir: join(dataDir, 'nats'), monitoring: true });
      stops.push(() => nats?.stop() ?? Promise.resolve());
    }
    const natsUrl = nats?.url ?? config.natsUrl ?? '';
    const nc = await connectNats(natsUrl, 'olmq-up', log);
    stops.push(() => nc.close());
    const backbone = await openBackbone(nc);

    // The OLM API and the watcher's lease namespace.
    const registry = createRegistry();
    const client = await KubeClient.fromKubeConfig(cluster.id, cluster.kubeConfig, {
      userAgent: `olmq-up/${olmqVersion()}`,
      requests: createApiRequestCounter(registry),
    });
    stops.push(() => Promise.resolve(client.close()));
    await ensureOlmApi(client);
    // olmq's own namespace, and the global catalog namespace CatalogSources go in.
    for (const name of new Set(['olmq-system', config.globalCatalogNamespace])) {
      await client
        .create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })
        .catch((error: unknown) => {
          if (!isAlreadyExists(error)) throw error;
        });
    }

    const watcher = await startWatcher({
      cluster,
      backbone,
      log,
      registry,
      identity: `${hostname()}-${process.pid}`,
      leaseNamespace: 'olmq-system',
      leaseName: `olmq-watcher-${cluster.id}`.slice(0, 63),
      leaseDurationSeconds: 15,
    });
    stops.push(() => watcher.stop());
    await watcher.synced();

    // Every function of this build, sharing the process's connection, client and metrics.
    const names = Object.keys(builtInFunctions);
    const functions = await startFunctions(names, builtInFunctions, {
      backbone,
      clients: new Map([[cluster.id, client]]),
      log,
      registry,
      metrics: createFunctionMetrics(registry),
      globalCatalogNamespace: config.globalCatalogNamespace,
      host: {},
    });
    stops.push(() => stopFunctions(functions));

    // PackageManifests: an aggregated API. Only the devcluster can reach this process at
    // 127.0.0.1; on a real cluster the packageserver Deployment (k8s/) serves them.
    if (devcluster !== undefined) {
      const packageServer = await startPackageServer({
        backbone,
        cluster: cluster.id,
        client,
        log: log.child({ component: 'packageserver' }),
        globalNamespace: config.globalCatalogNamespace,
      });
      stops.push(() => packageServer.close());
      await registerPackageApi(client, packageServer);
    }

    const endpoint = await serveOperations({
      port: config.metricsPort,
      host: '127.0.0.1',
      registry,
      readiness: { nats: () => (nc.isClosed() ? 'connection closed' : '') },
    });
    stops.push(() => endpoint.close());

    process.stdout.write(
      [
        'olmq is ready',
        `  cluster:  ${devcluster === undefined ? `${cluster.id} (from ${kubeconfigPath})` : `embedded devcluster at ${devcluster.url}`}`,
        `  NATS:     ${natsUrl}${nats === undefined ? '' : ' (local nats-server)'}`,
        `  metrics:  ${endpoint.url}/metrics`,
        `  running:  ${['watcher', ...names].join(', ')}`,
        '',
        'Point kubectl at it:',
        `  export KUBECONFIG=${kubeconfigPath}`,
        '  kubectl api-resources --api-group=operators.coreos.com',
        '  kubectl get csv,sub,ip,catsrc,og -A',
        `  kubectl get packagemanifests -n ${config.globalCatalogNamespace}`,
        '',
      ].join('\n'),
    );
    const signal = await untilSignal();
    log.info({ signal }, 'shutting down');
    await shutdown();
    return exitCodes.ok;
  } catch (error) {
    await shutdown();
    if (error instanceof KubeconfigError) {
      process.stderr.write(`olmq up: ${error.message}\n`);
      return exitCodes.usage;
    }
    if (error instanceof FunctionStartError) {
      process.stderr.write(`olmq up: ${error.message}\n`);
      return exitCodes.failed;
    }
    throw error;
  }
}
