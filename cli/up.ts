// `olmq up` (what `npm start` runs): the whole system on one machine — the embedded devcluster
// (unless --kubeconfig names a cluster), a local nats-server (unless NATS_URL is given), the OLM
// API installed, the watcher, and every function of this build (functions/index.ts), all in this
// one process, each hosted exactly as `olmq run <function>` hosts it (system/, startSystem).
import { resolve } from 'node:path';
import { KubeconfigError } from '../shared/kube/clusters.js';
import { serveOperations, type OperationsEndpoint } from '../shared/runtime/http.js';
import { createLogger } from '../shared/runtime/log.js';
import { createRegistry } from '../shared/runtime/metrics.js';
import { FunctionStartError } from '../shared/runtime/function-runner.js';
import { natsProblem, startSystem, type System } from '../system/index.js';
import { CatalogError } from '../shared/catalog/index.js';
import type { RegistryCatalog } from '../shared/registry/index.js';
import { exitCodes, olmqVersion, type CommandConfig } from './commands.js';
import {
  exampleCatalogDir,
  exampleCatalogName,
  loadExampleCatalog,
  serveExampleCatalog,
  type ServedCatalog,
} from './example-catalog.js';
import { untilSignal } from './lifecycle.js';
import { backboneOptionsOf, natsSettingsFor, reportNatsFailure } from './nats-options.js';

/** --catalog names a directory that is not a usable File-Based Catalog. */
class CatalogOptionError extends Error {
  constructor(dir: string, reason: string) {
    super(`--catalog ${dir}: ${reason}`);
  }
}

/** Starts everything, prints how to use it, and runs until SIGTERM/SIGINT. */
export async function runUp(config: CommandConfig<'up'>): Promise<number> {
  const nats = natsSettingsFor('olmq up', config, config.natsUrl ?? [], 'olmq-up');
  if (nats === undefined) return exitCodes.usage;
  const log = createLogger('up', config.logLevel);
  let system: System | undefined;
  let endpoint: OperationsEndpoint | undefined;
  let catalog: ServedCatalog | undefined;
  const shutdown = async (): Promise<void> => {
    await catalog
      ?.stop()
      .catch((error: unknown) => log.warn({ err: error }, 'shutdown step failed'));
    await endpoint
      ?.close()
      .catch((error: unknown) => log.warn({ err: error }, 'shutdown step failed'));
    // Each failed step is logged by stop() itself.
    await system?.stop().catch(() => undefined);
  };
  try {
    let exampleCatalog: RegistryCatalog | undefined;
    if (config.catalog !== 'none') {
      const dir = resolve(config.catalog ?? exampleCatalogDir);
      exampleCatalog = await loadExampleCatalog(dir, log).catch((error: unknown) => {
        throw error instanceof CatalogError ? new CatalogOptionError(dir, error.message) : error;
      });
    }
    const onDevcluster = config.kubeconfig === undefined;
    system = await startSystem({
      log,
      kubeconfig: config.kubeconfig,
      kubeconfigOut: config.kubeconfigOut,
      devclusterPort: config.port,
      dataDir: config.dataDir,
      ...(config.natsUrl === undefined ? {} : { nats }),
      natsMonitoring: true,
      registry: createRegistry(),
      backbone: backboneOptionsOf(config),
      purgeDeletesAfterMs: config.purgeDeletesAfter,
      connectionName: 'olmq-up',
      client: { userAgent: `olmq-up/${olmqVersion()}` },
      globalCatalogNamespace: config.globalCatalogNamespace,
      // Only the devcluster can reach this process at 127.0.0.1; on a real cluster the
      // packageserver Deployment (k8s/) serves PackageManifests.
      packageServer: onDevcluster,
    });
    const { nc, watcher } = system;
    if (exampleCatalog !== undefined) {
      catalog = await serveExampleCatalog({
        catalog: exampleCatalog,
        namespace: config.globalCatalogNamespace,
        client: system.client,
      });
    }
    endpoint = await serveOperations({
      port: config.metricsPort,
      host: '127.0.0.1',
      registry: system.registry,
      readiness: {
        nats: () => natsProblem(nc),
        mirror: () => watcher?.publishFailures() ?? '',
      },
    });

    const { cluster, devcluster, kubeconfigPath, natsServer } = system;
    process.stdout.write(
      [
        'olmq is ready',
        `  cluster:  ${devcluster === undefined ? `${cluster.id} (from ${kubeconfigPath})` : `embedded devcluster at ${devcluster.url}`}`,
        `  NATS:     ${system.natsUrl}${natsServer === undefined ? '' : ' (local nats-server)'}`,
        `  metrics:  ${endpoint.url}/metrics`,
        `  running:  ${['watcher', ...system.functions.map((f) => f.name)].join(', ')}`,
        ...(catalog === undefined
          ? []
          : [
              `  catalog:  ${config.globalCatalogNamespace}/${exampleCatalogName}, ${catalog.packages} packages served at ${catalog.address}`,
            ]),
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
    if (reportNatsFailure('olmq up', error, nats)) return exitCodes.failed;
    if (error instanceof KubeconfigError || error instanceof CatalogOptionError) {
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
