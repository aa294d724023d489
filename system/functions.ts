// How a process hosts olmq functions, shared by `olmq run <function>` (one function per process)
// and startSystem (every function of this build in one process, as `olmq up` runs them): a
// function table, one API client per cluster, and starting/stopping functions through
// shared/runtime/function-runner.ts.
import type { Registry } from 'prom-client';
import type { MirrorCopy } from '../shared/bus/backbone.js';
import type { ClusterAccess } from '../shared/kube/clusters.js';
import { KubeClient } from '../shared/kube/client.js';
import type { CreateFunction } from '../shared/runtime/function-module.js';
import {
  startFunction,
  type FunctionRuntime,
  type RunningFunction,
} from '../shared/runtime/function-runner.js';
import { createApiRequestCounter } from '../shared/runtime/metrics.js';

/** Function name → lazy loader of its module; functions/index.ts has the functions of this build. */
export type FunctionTable = Readonly<Record<string, () => Promise<CreateFunction>>>;

/** How long in-flight reconciles may take to finish on shutdown (k8s gives 60 s). */
export const drainGraceMs = 25_000;

/** A function is named that the function table does not have. A usage error: exit code 2. */
export class UnknownFunctionError extends Error {
  constructor(
    readonly functionName: string,
    /** The names the table has. */
    readonly known: readonly string[],
  ) {
    super(`unknown function "${functionName}" (one of: ${known.join(', ')})`);
    this.name = 'UnknownFunctionError';
  }
}

/** One API client per cluster, counting requests in `registry`, within `limits` when given. */
export async function clientsFor(
  clusters: readonly ClusterAccess[],
  registry: Registry,
  userAgent: string,
  limits: { qps?: number; burst?: number; transientRetryWindowMs?: number } = {},
): Promise<Map<string, KubeClient>> {
  const requests = createApiRequestCounter(registry);
  const clients = new Map<string, KubeClient>();
  for (const cluster of clusters) {
    clients.set(
      cluster.id,
      await KubeClient.fromKubeConfig(cluster.id, cluster.kubeConfig, {
        userAgent,
        requests,
        ...limits,
      }),
    );
  }
  return clients;
}

/** A live copy of the mirror, and the functions that read through it (functions/index.ts). */
export interface SharedMirrorCopy {
  copy: MirrorCopy;
  readers: ReadonlySet<string>;
}

/**
 * Loads and starts each named function of `table`, in order; those among `mirrorCopy.readers`
 * read the mirror through its copy. Throws UnknownFunctionError for a name the table lacks
 * (before starting any), and stops those already started when one fails to start.
 */
export async function startFunctions(
  names: readonly string[],
  table: FunctionTable,
  runtime: FunctionRuntime,
  mirrorCopy?: SharedMirrorCopy,
): Promise<RunningFunction[]> {
  const loaders = names.map((name) => {
    const load = table[name];
    if (load === undefined) throw new UnknownFunctionError(name, Object.keys(table));
    return { name, load };
  });
  const running: RunningFunction[] = [];
  try {
    for (const { name, load } of loaders) {
      const backbone =
        mirrorCopy?.readers.has(name) === true
          ? { ...runtime.backbone, copy: mirrorCopy.copy }
          : runtime.backbone;
      running.push(await startFunction(name, await load(), { ...runtime, backbone }));
    }
  } catch (error) {
    await stopFunctions(running, 0);
    throw error;
  }
  return running;
}

/**
 * Stops functions together: each drains its in-flight work for up to `graceMs`. All are stopped
 * even when one fails to; the first failure is thrown afterwards. The API requests of `clients`
 * stop retrying first: a reconcile waiting out an unreachable API server would hold the drain for
 * the whole grace, and its work item is redelivered anyway.
 */
export async function stopFunctions(
  running: readonly RunningFunction[],
  graceMs = drainGraceMs,
  clients: ReadonlyMap<string, KubeClient> = new Map(),
): Promise<void> {
  for (const client of clients.values()) client.endRetries();
  const results = await Promise.allSettled(running.map((f) => f.stop(graceMs)));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}
