// The contract of startSystem (./start.ts): what a caller chooses, and the handle on what runs.
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Devcluster } from '../devcluster/index.js';
import type { PackageServer } from '../packageserver/index.js';
import type { Backbone, BackboneOptions } from '../shared/bus/backbone.js';
import type { NatsServer } from '../shared/bus/nats-server.js';
import type { KubeClient } from '../shared/kube/client.js';
import type { ClusterAccess } from '../shared/kube/clusters.js';
import type { FunctionHostOptions } from '../shared/runtime/function-host.js';
import type { RunningFunction } from '../shared/runtime/function-runner.js';
import type { MirroredKind } from '../watcher/kinds.js';
import type { Watcher } from '../watcher/index.js';
import type { FunctionTable } from './functions.js';
import type { NatsConnectionSettings } from './nats.js';

/**
 * What startSystem starts. Every field but `log` has a default, chosen as `olmq up` runs: the
 * embedded devcluster, a local nats-server, the watcher and every function of this build.
 */
export interface SystemOptions {
  /** Logger of every part; the devcluster and the package server log through named children. */
  log: Logger;
  /** Serve the cluster of this kubeconfig file (its first context); default: the devcluster. */
  kubeconfig?: string | undefined;
  /** Where the devcluster's admin kubeconfig is written; default: a temp file, removed on stop. */
  kubeconfigOut?: string | undefined;
  /** Cluster id in messages, keys and metrics; default: the kubeconfig context's name. */
  clusterId?: string | undefined;
  /** HTTPS port of the devcluster; default 0, any free port. */
  devclusterPort?: number | undefined;
  /** Milliseconds before a simulated pod becomes ready; default: the devcluster's (1000). */
  podReadyDelayMs?: number | undefined;
  /**
   * Where the devcluster and the local nats-server keep their data across restarts (in
   * devcluster/ and nats/ below it); default: the devcluster in memory, the nats-server in a
   * temp dir removed on stop.
   */
  dataDir?: string | undefined;
  /** A NATS server with JetStream to use; default: start a local nats-server. */
  natsUrl?: string | undefined;
  /**
   * NATS servers and credentials to use (wins over natsUrl); default: a local nats-server. With
   * the local server, only its URL is taken from these settings.
   */
  nats?: NatsConnectionSettings | undefined;
  /** How old the mirror's delete markers get before the upkeep purges them; default 1 h. */
  purgeDeletesAfterMs?: number | undefined;
  /** Whether the local nats-server serves its monitoring endpoint; default false. */
  natsMonitoring?: boolean | undefined;
  /** Name of the NATS connection; default "olmq". */
  connectionName?: string | undefined;
  /** Settings of the backbone's assets; default: the backbone's defaults. */
  backbone?: Partial<BackboneOptions> | undefined;
  /** The system's API client (the functions', watcher's lease aside): user agent and limits. */
  client?:
    | {
        userAgent?: string;
        qps?: number;
        burst?: number;
        /** How long a request is retried while the API is unreachable or throttling (default 30 s). */
        transientRetryWindowMs?: number;
      }
    | undefined;
  /** Metrics registry of the client, the functions and, by default, the watcher; default: new. */
  registry?: Registry | undefined;
  /** The global catalog namespace handed to functions and the package server; default "olm". */
  globalCatalogNamespace?: string | undefined;
  /** Namespaces made sure of once the OLM API is in; default olmq-system and the global one. */
  namespaces?: readonly string[] | undefined;
  /** The watcher of the cluster, or false for none. */
  watcher?: WatcherSettings | false | undefined;
  /** The functions this process hosts. */
  functions?: FunctionSettings | undefined;
  /**
   * Serve PackageManifests from this process and register the APIService; default false. Only
   * with the devcluster: a real cluster cannot reach this process's 127.0.0.1.
   */
  packageServer?: boolean | undefined;
}

/** The watcher startSystem runs; every field has `olmq up`'s default. */
export interface WatcherSettings {
  /** Name of this replica in the Lease; default: host name and pid. */
  identity?: string;
  /** Namespace of the Lease; default olmq-system. */
  leaseNamespace?: string;
  /** Name of the Lease; default olmq-watcher-<cluster id>. */
  leaseName?: string;
  /** Default 15. */
  leaseDurationSeconds?: number;
  /** Kinds to mirror; default all of watcher/kinds.ts. */
  kinds?: readonly MirroredKind[];
  /** Registry of the watcher's metrics; default the system's. */
  registry?: Registry;
  /** A watch silent this long is resumed; default 150 s. */
  stallTimeoutMs?: number;
  /** Full resync period; default 6 h, 0 never. */
  resyncMs?: number;
}

/** The functions startSystem hosts in this process. */
export interface FunctionSettings {
  /** Where the functions come from; default functions/index.ts, every function of this build. */
  table?: FunctionTable;
  /** Which functions of the table to start, in order; default all of them, [] for none. */
  names?: readonly string[];
  /** Tunables of every FunctionHost (concurrency, backoff, ...); default the host's. */
  host?: Partial<FunctionHostOptions>;
  /** How long stop() lets in-flight reconciles finish; default drainGraceMs (25 s). */
  stopGraceMs?: number;
}

/** A running system. Its parts are here for callers that drive or inspect them. */
export interface System {
  /** The cluster served: its id and a kubeconfig whose current context is it. */
  cluster: ClusterAccess;
  /** The kubeconfig file of that cluster (given, or written for the devcluster). */
  kubeconfigPath: string;
  /** The embedded devcluster, when no kubeconfig was given. */
  devcluster: Devcluster | undefined;
  /** The local nats-server, when no NATS URL was given. */
  natsServer: NatsServer | undefined;
  /** URL(s) of the NATS server(s) in use, comma-separated. */
  natsUrl: string;
  /** The one NATS connection the watcher and the functions share. */
  nc: NatsConnection;
  backbone: Backbone;
  /** The API client of the functions and the package server (requests counted in `registry`). */
  client: KubeClient;
  registry: Registry;
  watcher: Watcher | undefined;
  /** The hosted functions, in start order. */
  functions: readonly RunningFunction[];
  packageServer: PackageServer | undefined;
  /**
   * Stops every part in the reverse order of starting; a step that fails is logged and the
   * others still run, then the first failure is thrown. Calling it again does nothing.
   */
  stop(): Promise<void>;
}
