// `olmq devcluster`: the embedded Kubernetes-compatible API server in the foreground.
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { startDevcluster } from '../devcluster/index.js';
import { createLogger } from '../shared/runtime/log.js';
import { exitCodes, type CommandConfig } from './commands.js';
import { untilSignal } from './lifecycle.js';

/** Serves until SIGTERM/SIGINT; prints a line containing "ready" once serving. */
export async function runDevcluster(config: CommandConfig<'devcluster'>): Promise<number> {
  const logger = createLogger('devcluster', config.logLevel);
  const cluster = await startDevcluster({
    port: config.port,
    host: config.host,
    podReadyDelayMs: config.podReadyDelay,
    logger,
    ...(config.dataDir === undefined ? {} : { dataDir: resolve(config.dataDir) }),
  });
  const kubeconfig = resolve(config.kubeconfig);
  await mkdir(dirname(kubeconfig), { recursive: true });
  await cluster.writeKubeconfig(kubeconfig);
  process.stdout.write(
    `devcluster ready at ${cluster.url}\n  export KUBECONFIG=${kubeconfig}\n  kubectl get namespaces\n`,
  );
  const signal = await untilSignal();
  logger.info({ signal }, 'shutting down');
  await cluster.close();
  return exitCodes.ok;
}
