// Runs a function module (./function-module.ts) on the backbone: builds its context, hosts each
// of its definitions with a FunctionHost, and on stop drains them before closing the function.
// `olmq run <function>` runs one of these per process; `olmq up` runs every registered one in
// its single process; test fixtures run the echo function the same way.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Backbone } from '../bus/backbone.js';
import type { KubeClient } from '../kube/client.js';
import { ClusterMembership } from './cluster-membership.js';
import { FunctionHost, type FunctionHostOptions } from './function-host.js';
import type { CreateFunction, FunctionContext } from './function-module.js';
import type { FunctionMetrics } from './metrics.js';

/** What every function of a process shares: connections, clients, metrics, settings. */
export interface FunctionRuntime {
  backbone: Backbone;
  /**
   * The clusters the process serves, one API client each: a fixed map, or a membership whose
   * clusters join and leave while the functions run (a pool, system/pool.ts).
   */
  clients: ReadonlyMap<string, KubeClient> | ClusterMembership;
  log: Logger;
  registry: Registry;
  /** The function host's metrics, registered once per registry and shared by its functions. */
  metrics: FunctionMetrics;
  /** The global catalog namespace handed to functions (upstream default: olm). */
  globalCatalogNamespace: string;
  /** Tunables of every FunctionHost (concurrency, backoff, ...). */
  host: Partial<FunctionHostOptions>;
}

/** A function whose definitions are being hosted. */
export interface RunningFunction {
  /** The module's name, e.g. "install". */
  name: string;
  /** The hosts, one per definition, in the order the module returned them. */
  hosts: readonly FunctionHost<unknown, unknown, unknown>[];
  /**
   * Stops pulling work, lets in-flight reconciles finish for up to `graceMs` (unfinished items
   * are redelivered elsewhere), then aborts the function's signal and closes it.
   */
  stop(graceMs?: number): Promise<void>;
}

/** A function module failed to start; names the function and keeps the cause. */
export class FunctionStartError extends Error {
  constructor(
    readonly functionName: string,
    cause: unknown,
  ) {
    super(
      `function ${functionName} failed to start: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.name = 'FunctionStartError';
  }
}

/** Creates the function and starts a FunctionHost per definition. */
export async function startFunction(
  name: string,
  create: CreateFunction,
  runtime: FunctionRuntime,
): Promise<RunningFunction> {
  const log = runtime.log.child({ function: name });
  const lifetime = new AbortController();
  const clusters = runtime.clients;
  const context: FunctionContext = {
    backbone: runtime.backbone,
    clients: clusters instanceof ClusterMembership ? clusters.clients : clusters,
    log,
    registry: runtime.registry,
    globalCatalogNamespace: runtime.globalCatalogNamespace,
    signal: lifetime.signal,
  };
  let started;
  try {
    started = await create(context);
  } catch (error) {
    lifetime.abort();
    throw new FunctionStartError(name, error);
  }
  const hosts: FunctionHost<unknown, unknown, unknown>[] = [];
  // A fixed map becomes one membership shared by the function's hosts (empty: every cluster).
  const served =
    clusters instanceof ClusterMembership || clusters.size === 0
      ? clusters
      : new ClusterMembership(clusters);
  const stopAll = async (graceMs?: number): Promise<void> => {
    await Promise.all(hosts.map((h) => h.stop(graceMs)));
    lifetime.abort();
    await started.close?.();
  };
  try {
    if (started.definitions.length === 0) throw new Error('it returned no definitions');
    const names = new Set<string>();
    for (const definition of started.definitions) {
      // Two definitions of one name would share (and fight over) one durable consumer.
      const queue = definition.key.queue;
      if (names.has(queue)) throw new Error(`it returned two definitions named "${queue}"`);
      names.add(queue);
      const host = new FunctionHost<unknown, unknown, unknown>(
        runtime.backbone,
        definition,
        log.child({ definition: queue }),
        runtime.metrics,
        runtime.host,
        served,
      );
      await host.start();
      hosts.push(host);
    }
  } catch (error) {
    await stopAll(0).catch(() => undefined);
    throw new FunctionStartError(name, error);
  }
  log.info({ definitions: started.definitions.map((d) => d.key.queue) }, 'function started');
  return { name, hosts, stop: stopAll };
}
