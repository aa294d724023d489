// `olmq run <function>`: one replica of one OLM function. It connects to NATS, serves the
// clusters of its kubeconfig (one API client each; a directory is followed as clusters join and
// leave, system/pool.ts), hosts the function's definitions, serves
// /metrics /healthz /readyz, and on SIGTERM/SIGINT drains in-flight work before exiting.
import { statSync } from 'node:fs';
import { openBackbone } from '../shared/bus/backbone.js';
import { LiveMirrorCopy } from '../shared/bus/mirror-copy.js';
import { clusterFilesOf, KubeconfigError, loadClusterFile } from '../shared/kube/clusters.js';
import { FunctionStartError, type RunningFunction } from '../shared/runtime/function-runner.js';
import { serveOperations, type OperationsEndpoint } from '../shared/runtime/http.js';
import { createLogger } from '../shared/runtime/log.js';
import {
  createFunctionMetrics,
  createNatsMessageCounter,
  createRegistry,
} from '../shared/runtime/metrics.js';
import { functionModules, keepsMirrorCopy } from '../functions/index.js';
// system/'s modules, not its index.ts: a replica of one function loads no devcluster, watcher
// or package server.
import { startPool, type Pool, type PoolOptions } from '../system/pool.js';
import {
  startFunctions,
  stopFunctions,
  UnknownFunctionError,
  type FunctionTable,
} from '../system/functions.js';
import { connectNats, natsProblem } from '../system/nats.js';
import { exitCodes, olmqVersion, type CommandConfig } from './commands.js';
import { clustersOf, untilSignal } from './lifecycle.js';
import { backboneOptionsOf, natsSettingsFor, reportNatsFailure } from './nats-options.js';

/** Seams for tests: another function table, another stop trigger, the endpoint once ready. */
export interface RunHooks {
  /** Default: the functions of this build. */
  table?: FunctionTable;
  /** Resolves when the process should shut down; default: SIGTERM or SIGINT. */
  until?: () => Promise<string>;
  /** Told once the function runs and the endpoint serves. */
  onReady?: (endpoint: OperationsEndpoint) => void;
}

/** Runs function `name` until told to stop; exit code 0 after a clean drain. */
export async function runFunction(
  config: CommandConfig<'run'>,
  name: string,
  hooks: RunHooks = {},
): Promise<number> {
  const command = `olmq run ${name}`;
  const table: FunctionTable = hooks.table ?? functionModules;
  if (table[name] === undefined) {
    // `olmq` itself checks the name against functionNames; this guards other tables (tests).
    process.stderr.write(
      `${command}: ${new UnknownFunctionError(name, Object.keys(table)).message}\n`,
    );
    return exitCodes.usage;
  }
  const nats = natsSettingsFor(command, config, config.natsUrl, `olmq-${name}`);
  if (nats === undefined) return exitCodes.usage;
  // A directory is a pool's: followed while the function runs (system/pool.ts).
  let source: PoolOptions['source'];
  if (config.kubeconfig !== undefined && isDirectory(config.kubeconfig)) {
    source = { dir: config.kubeconfig };
    // Its files are checked before connecting to anything: bad input is a usage error.
    const problem = clusterDirProblem(config.kubeconfig);
    if (problem !== undefined) {
      process.stderr.write(`${command}: ${problem}\n`);
      return exitCodes.usage;
    }
  } else {
    const clusters = clustersOf(command, config);
    if (clusters === undefined) return exitCodes.usage;
    source = { clusters };
  }

  const log = createLogger('run', config.logLevel);
  const registry = createRegistry();
  const stops: (() => Promise<void> | void)[] = [];
  const shutdown = async (): Promise<void> => {
    for (const stop of stops.reverse()) {
      try {
        await stop();
      } catch (error) {
        log.warn({ err: error }, 'shutdown step failed');
      }
    }
  };
  let running: RunningFunction[] = [];
  try {
    const nc = await connectNats(nats, `olmq-${name}`, log);
    stops.push(() => nc.close());
    createNatsMessageCounter(registry, () => nc.stats());
    const endpoint = await serveOperations({
      port: config.metricsPort,
      registry,
      readiness: {
        nats: () => natsProblem(nc),
        function: () => (running.length > 0 ? '' : 'starting'),
      },
    });
    stops.push(() => endpoint.close());
    const backbone = await openBackbone(nc, backboneOptionsOf(config));
    let pool: Pool;
    try {
      pool = await startPool({
        source,
        registry,
        log,
        userAgent: `olmq-${name}/${olmqVersion()}`,
        limits: { qps: config.kubeApiQps, burst: config.kubeApiBurst },
      });
    } catch (error) {
      if (!(error instanceof KubeconfigError)) throw error;
      process.stderr.write(`${command}: ${error.message}\n`);
      await shutdown();
      return exitCodes.usage;
    }
    stops.push(() => pool.stop());
    const clients = pool.membership.clients;
    // For a function that reads through it (it follows a cluster once first read); stopped
    // after the function (stops run in reverse).
    const copy = keepsMirrorCopy.has(name) ? new LiveMirrorCopy(backbone) : undefined;
    if (copy !== undefined) stops.push(() => copy.stop());
    running = await startFunctions(
      [name],
      table,
      {
        backbone,
        clients: pool.membership,
        log,
        registry,
        metrics: createFunctionMetrics(registry),
        globalCatalogNamespace: config.globalCatalogNamespace,
        host: {
          concurrency: config.concurrency,
          consumerInactiveMs: config.consumerInactive * 1000,
        },
      },
      copy === undefined ? undefined : { copy, readers: keepsMirrorCopy },
    );
    stops.push(() => stopFunctions(running, undefined, clients));
    log.info(
      {
        clusters: pool.membership.clusters,
        concurrency: config.concurrency,
        metrics: endpoint.url,
      },
      'function running',
    );
    hooks.onReady?.(endpoint);
    const signal = await (hooks.until ?? untilSignal)();
    log.info({ signal }, 'shutting down: draining in-flight work');
    await shutdown();
    return exitCodes.ok;
  } catch (error) {
    await shutdown();
    if (reportNatsFailure(command, error, nats)) return exitCodes.failed;
    if (error instanceof FunctionStartError) {
      process.stderr.write(`${command}: ${error.message}\n`);
      return exitCodes.failed;
    }
    throw error;
  }
}

// What makes a kubeconfig file of directory `dir` unusable, if anything.
function clusterDirProblem(dir: string): string | undefined {
  try {
    for (const { file } of clusterFilesOf(dir)) loadClusterFile(file);
    return undefined;
  } catch (error) {
    if (error instanceof KubeconfigError) return error.message;
    throw error;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false; // clustersOf says what is wrong with it
  }
}
