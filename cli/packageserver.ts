// `olmq packageserver`: the aggregated API for PackageManifests of one cluster, with its
// operations endpoint. In a cluster the Deployment, Service and APIService come from k8s/;
// outside it (--register) the process registers itself.
import { readFile } from 'node:fs/promises';
import {
  RequestHeaderConfigError,
  registerPackageApi,
  startPackageServer,
} from '../packageserver/index.js';
import {
  publishCaBundle,
  sharedServingMaterial,
  type ServingMaterial,
} from '../packageserver/serving.js';
import { openBackbone } from '../shared/bus/backbone.js';
import { KubeClient } from '../shared/kube/client.js';
import { serveOperations } from '../shared/runtime/http.js';
import { createLogger } from '../shared/runtime/log.js';
import { createNatsMessageCounter, createRegistry } from '../shared/runtime/metrics.js';
import { connectNats, natsProblem } from '../system/nats.js';
import { exitCodes, type CommandConfig } from './commands.js';
import { clustersOf, untilSignal } from './lifecycle.js';
import { natsSettingsFor, reportNatsFailure } from './nats-options.js';

function usageError(message: string): number {
  process.stderr.write(`olmq packageserver: ${message}\n`);
  return exitCodes.usage;
}

/** Runs until SIGTERM/SIGINT; exit code 0 after a clean shutdown. */
export async function runPackageServer(config: CommandConfig<'packageserver'>): Promise<number> {
  const log = createLogger('packageserver', config.logLevel);
  if ((config.tlsCertFile === undefined) !== (config.tlsKeyFile === undefined))
    return usageError('--tls-cert-file and --tls-key-file go together');
  if (config.register && (config.host === '0.0.0.0' || config.host === '::'))
    return usageError(
      '--register needs --host to be an address the API server can reach, not a wildcard',
    );
  const nats = natsSettingsFor('olmq packageserver', config, config.natsUrl, 'olmq-packageserver');
  if (nats === undefined) return exitCodes.usage;
  const clusters = clustersOf('olmq packageserver', config);
  if (clusters === undefined) return exitCodes.usage;
  const [cluster, ...others] = clusters;
  if (cluster === undefined || others.length > 0) {
    return usageError(
      `serves exactly one cluster, but the kubeconfig has ${clusters.length} contexts; pass --context`,
    );
  }
  let serving: { certPem: string; keyPem: string } | undefined;
  if (config.tlsCertFile !== undefined && config.tlsKeyFile !== undefined) {
    try {
      serving = {
        certPem: await readFile(config.tlsCertFile, 'utf8'),
        keyPem: await readFile(config.tlsKeyFile, 'utf8'),
      };
    } catch (error) {
      return usageError(`cannot read the serving certificate: ${(error as Error).message}`);
    }
  }
  const registry = createRegistry();
  const client = await KubeClient.fromKubeConfig(cluster.id, cluster.kubeConfig, {
    userAgent: 'olmq-packageserver',
  });
  const service = { namespace: config.serviceNamespace, name: config.serviceName };
  let shared: ServingMaterial | undefined;
  if (serving === undefined && config.servingSecret !== undefined) {
    shared = await sharedServingMaterial(client, service, config.servingSecret);
    serving = { certPem: shared.certPem, keyPem: shared.keyPem };
  }
  let nc;
  let backbone;
  try {
    nc = await connectNats(nats, `olmq-packageserver-${cluster.id}`, log);
    backbone = await openBackbone(nc);
  } catch (error) {
    await nc?.close();
    client.close();
    if (reportNatsFailure('olmq packageserver', error, nats)) return exitCodes.failed;
    throw error;
  }
  const connection = nc;
  createNatsMessageCounter(registry, () => connection.stats());
  let server;
  try {
    server = await startPackageServer({
      backbone,
      cluster: cluster.id,
      client,
      log,
      globalNamespace: config.globalNamespace,
      host: config.host,
      port: config.port,
      ...(serving === undefined ? {} : { serving }),
      service,
    });
  } catch (error) {
    await nc.close();
    client.close();
    if (error instanceof RequestHeaderConfigError) {
      process.stderr.write(`olmq packageserver: ${error.message}\n`);
      return exitCodes.failed;
    }
    throw error;
  }
  const caBundlePem = shared?.caPem ?? server.caBundlePem;
  if (config.register) {
    await registerPackageApi(
      client,
      { host: server.host, port: server.port, caBundlePem },
      service,
    );
  } else if (shared !== undefined) await publishCaBundle(client, shared.caPem);
  const running = server;
  const endpoint = await serveOperations({
    port: config.metricsPort,
    registry,
    readiness: {
      nats: () => natsProblem(connection),
      catalogs: () => (running.ready() ? '' : 'catalogs not loaded yet'),
    },
  });
  log.info(
    { cluster: cluster.id, api: server.address, metrics: endpoint.url },
    'packageserver started',
  );
  const signal = await untilSignal();
  log.info({ signal }, 'shutting down');
  await server.close();
  await nc.close();
  client.close();
  await endpoint.close();
  return exitCodes.ok;
}
