// `olmq watcher`: one cluster's watcher replica, with its operations endpoint.
import { hostname } from 'node:os';
import { startWatcher } from '../watcher/index.js';
import { openBackbone } from '../shared/bus/backbone.js';
import { createLogger } from '../shared/runtime/log.js';
import { serveOperations } from '../shared/runtime/http.js';
import { createNatsMessageCounter, createRegistry } from '../shared/runtime/metrics.js';
import { startUpkeep } from '../shared/bus/upkeep.js';
import { connectNats, natsProblem } from '../system/nats.js';
import { exitCodes, type CommandConfig } from './commands.js';
import { clustersOf, untilSignal } from './lifecycle.js';
import { backboneOptionsOf, natsSettingsFor, reportNatsFailure } from './nats-options.js';

/** Runs until SIGTERM/SIGINT; exit code 0 after a clean shutdown. */
export async function runWatcher(config: CommandConfig<'watcher'>): Promise<number> {
  const log = createLogger('watcher', config.logLevel);
  const nats = natsSettingsFor('olmq watcher', config, config.natsUrl, 'olmq-watcher');
  if (nats === undefined) return exitCodes.usage;
  const clusters = clustersOf('olmq watcher', config);
  if (clusters === undefined) return exitCodes.usage;
  const [cluster, ...others] = clusters;
  if (cluster === undefined || others.length > 0) {
    process.stderr.write(
      `olmq watcher: watches exactly one cluster, but the kubeconfig has ${clusters.length} contexts; pass --context (run one watcher per cluster)\n`,
    );
    return exitCodes.usage;
  }
  const registry = createRegistry();
  let nc;
  let backbone;
  try {
    nc = await connectNats(nats, `olmq-watcher-${cluster.id}`, log);
    backbone = await openBackbone(nc, backboneOptionsOf(config));
  } catch (error) {
    await nc?.close();
    if (reportNatsFailure('olmq watcher', error, nats)) return exitCodes.failed;
    throw error;
  }
  const connection = nc;
  createNatsMessageCounter(registry, () => connection.stats());
  const watcher = await startWatcher({
    cluster,
    backbone,
    log,
    registry,
    identity: config.identity ?? `${hostname()}-${process.pid}`,
    leaseNamespace: config.leaseNamespace,
    leaseName: `olmq-watcher-${cluster.id}`.slice(0, 63),
    leaseDurationSeconds: config.leaseDuration,
    stallTimeoutMs: config.watchStallTimeout * 1000,
    resyncMs: config.resyncInterval * 1000,
  });
  let synced = false;
  void watcher.synced().then(() => (synced = true));
  const endpoint = await serveOperations({
    port: config.metricsPort,
    registry,
    readiness: {
      nats: () => natsProblem(connection),
      // A standby is ready too: it serves by standing by.
      mirror: () =>
        !watcher.isLeading()
          ? ''
          : !synced
            ? 'first list not mirrored yet'
            : // A change that cannot be published leaves the mirror behind the cluster.
              watcher.publishFailures(),
    },
  });
  const upkeep = startUpkeep(backbone, {
    log,
    registry,
    purgeDeletesAfterMs: config.purgeDeletesAfter,
  });
  log.info({ cluster: cluster.id, metrics: endpoint.url }, 'watcher started');
  const signal = await untilSignal();
  log.info({ signal }, 'shutting down');
  upkeep.stop();
  await watcher.stop();
  await nc.close(); // the mirror has stopped: nothing is left to flush
  await endpoint.close();
  return exitCodes.ok;
}
