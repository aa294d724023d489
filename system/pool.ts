// A pool: the clusters one process serves, as a ClusterMembership its functions follow. Given a
// kubeconfig directory, the pool watches it: a file added is a cluster joining (its client is
// created and the functions open its consumers), a file removed is a cluster leaving (its
// consumers close; its client is closed once in-flight reconciles had time to finish), a file
// changed re-creates the cluster's client (rotated credentials). Changes are seen through
// fs.watch and, as a fallback for filesystems that do not report them, a periodic rescan.
import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { KubeClient } from '../shared/kube/client.js';
import {
  clusterFilesOf,
  KubeconfigError,
  loadClusterFile,
  type ClusterAccess,
} from '../shared/kube/clusters.js';
import { ClusterMembership } from '../shared/runtime/cluster-membership.js';
import { clientsFor, drainGraceMs } from './functions.js';

/** What a pool serves and how it makes clients. */
export interface PoolOptions {
  /** A fixed set of clusters, or a directory of kubeconfig files (one cluster each) to follow. */
  source: { clusters: readonly ClusterAccess[] } | { dir: string };
  registry: Registry;
  log: Logger;
  userAgent: string;
  /** Limits of every client (see KubeClient). */
  limits?: { qps?: number; burst?: number; transientRetryWindowMs?: number };
  /** How often the directory is read again even without a change event; default 30 s. */
  rescanMs?: number;
  /** How long a replaced or departed cluster's client stays open; default drainGraceMs. */
  closeAfterMs?: number;
}

/** A running pool. */
export interface Pool {
  /** The served clusters; hand it to the functions (FunctionRuntime.clients). */
  membership: ClusterMembership;
  /** Reads the directory now (tests; the watch does it on its own). */
  rescan(): Promise<void>;
  /** Stops following the directory and closes every client. */
  stop(): Promise<void>;
}

/**
 * Starts a pool. A directory's files are loaded at once and a bad one throws KubeconfigError
 * (a start with bad input fails); later, a bad file is logged and skipped (a cluster already
 * served keeps its client). An empty directory is a pool waiting for its first cluster.
 */
export async function startPool(options: PoolOptions): Promise<Pool> {
  const { log, registry } = options;
  const make = async (access: readonly ClusterAccess[]): Promise<Map<string, KubeClient>> =>
    clientsFor(access, registry, options.userAgent, options.limits);
  const source = options.source;
  const digests = new Map<string, string>();
  let initial: readonly ClusterAccess[];
  if ('clusters' in source) initial = source.clusters;
  else {
    const files = clusterFilesOf(source.dir);
    initial = files.map((f) => ({ id: f.id, kubeConfig: loadClusterFile(f.file) }));
    for (const f of files) digests.set(f.id, f.digest);
    if (files.length === 0)
      log.warn({ dir: source.dir }, 'kubeconfig directory holds no cluster yet');
  }
  const membership = new ClusterMembership(await make(initial));
  servedGauge(registry, membership);

  // Clients of departed or re-created clusters, closed once their reconciles had time to end.
  const closing = new Map<NodeJS.Timeout, KubeClient>();
  const closeLater = (client: KubeClient): void => {
    const timer = setTimeout(() => {
      closing.delete(timer);
      client.close();
    }, options.closeAfterMs ?? drainGraceMs);
    timer.unref();
    closing.set(timer, client);
  };
  // Files whose content could not be used, by digest: logged once, not at every rescan.
  const refused = new Map<string, string>();

  const rescan = async (dir: string): Promise<void> => {
    const files = clusterFilesOf(dir);
    const present = new Set(files.map((f) => f.id));
    for (const f of files) {
      if (digests.get(f.id) === f.digest || refused.get(f.id) === f.digest) continue;
      let client: KubeClient | undefined;
      try {
        client = (await make([{ id: f.id, kubeConfig: loadClusterFile(f.file) }])).get(f.id);
      } catch (error) {
        if (!(error instanceof KubeconfigError)) throw error;
        refused.set(f.id, f.digest);
        log.error({ cluster: f.id, file: f.file, err: error }, 'kubeconfig file refused');
        continue;
      }
      if (client === undefined) continue;
      refused.delete(f.id);
      const joined = !digests.has(f.id);
      digests.set(f.id, f.digest);
      const replaced = membership.set(f.id, client);
      if (replaced !== undefined) closeLater(replaced);
      if (joined) log.info({ cluster: f.id, file: f.file }, 'cluster joined the pool');
      else
        log.info({ cluster: f.id, file: f.file }, 'cluster kubeconfig changed: client re-created');
    }
    for (const id of [...digests.keys()]) {
      if (present.has(id)) continue;
      digests.delete(id);
      refused.delete(id);
      const client = membership.remove(id);
      if (client !== undefined) closeLater(client);
      log.info({ cluster: id }, 'cluster left the pool');
    }
  };

  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let again = false;
  let scheduled: NodeJS.Timeout | undefined;
  // One rescan at a time; events during one ask for another after it.
  const scan = (dir: string): Promise<void> => {
    again = true;
    running = running.then(async () => {
      if (!again) return;
      again = false;
      await rescan(dir).catch((error: unknown) =>
        log.warn({ err: error, dir }, 'kubeconfig directory rescan failed'),
      );
    });
    return running;
  };
  if ('dir' in source) {
    const dir = source.dir;
    // Editors and Secret updates write in several steps: wait for them to settle.
    watcher = watch(dir, () => {
      clearTimeout(scheduled);
      scheduled = setTimeout(() => void scan(dir), 100);
    });
    watcher.on('error', (error) =>
      log.warn({ err: error, dir }, 'kubeconfig directory watch failed'),
    );
    timer = setInterval(() => void scan(dir), options.rescanMs ?? 30_000);
    timer.unref();
  }

  return {
    membership,
    rescan: () => ('dir' in source ? scan(source.dir) : Promise.resolve()),
    async stop() {
      watcher?.close();
      clearInterval(timer);
      clearTimeout(scheduled);
      await running;
      for (const [t, client] of closing) {
        clearTimeout(t);
        client.close();
      }
      closing.clear();
      for (const cluster of membership.clusters) membership.clients.get(cluster)?.close();
    },
  };
}

// olmq_served_clusters: how many clusters this process serves now.
function servedGauge(registry: Registry, membership: ClusterMembership): void {
  const name = 'olmq_served_clusters';
  if (registry.getSingleMetric(name) !== undefined) registry.removeSingleMetric(name);
  new Gauge({
    name,
    help: 'Clusters this process serves (its pool), each with its own consumers',
    registers: [registry],
    collect() {
      this.set(membership.clusters.length);
    },
  });
}
