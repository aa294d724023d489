// Process plumbing shared by the long-running commands: the clusters of the kubeconfig options,
// and waiting for SIGTERM/SIGINT to shut down gracefully (their NATS connection: system/nats.ts).
import { KubeconfigError, loadClusters, type ClusterAccess } from '../shared/kube/clusters.js';

/** The cluster-access options of a command (--kubeconfig, --context, --cluster). */
export interface ClusterOptions {
  kubeconfig?: string | undefined;
  context?: string | undefined;
  cluster?: string | undefined;
}

/**
 * The clusters `options` name. A kubeconfig that cannot be used is the user's to fix: its message
 * goes to stderr after `command`, and the result is undefined (the command exits 2).
 */
export function clustersOf(command: string, options: ClusterOptions): ClusterAccess[] | undefined {
  try {
    return loadClusters({
      path: options.kubeconfig,
      context: options.context,
      clusterId: options.cluster,
    });
  } catch (error) {
    if (!(error instanceof KubeconfigError)) throw error;
    process.stderr.write(`${command}: ${error.message}\n`);
    return undefined;
  }
}

/** Resolves with the first SIGTERM or SIGINT. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
