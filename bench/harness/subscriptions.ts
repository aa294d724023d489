// What the subscription-install benchmark does as a user, in either mode (one process, or one
// process per part): namespaces with an OperatorGroup, Subscriptions, and waiting for their
// CSVs to succeed through one watch rather than by polling, so the bench's own reads cost the
// API server (counted as the system's CPU) next to nothing.
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import type { WatchEvent, WatchStream } from '../../shared/kube/objects.js';

export interface BenchPackage {
  name: string;
  channel: string;
  csv: string;
  source?: string;
}

/** The two packages of catalogs/example each namespace of a burst subscribes to. */
export const packages: readonly [BenchPackage, BenchPackage] = [
  { name: 'etcd', channel: 'singlenamespace-alpha', csv: 'etcdoperator.v0.9.4' },
  { name: 'hawtio-operator', channel: 'stable-v1', csv: 'hawtio-operator.v1.2.0' },
];

/** A 1 MB CSV (stackgres-community, served as CatalogSource `large`). */
export const largeCsvPackage: BenchPackage = {
  name: 'stackgres-community',
  channel: 'stable',
  csv: 'stackgres-community.v1.18.8',
  source: 'large',
};

const csvRef = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion' };

/** Namespace `name` with an OperatorGroup targeting it alone. */
export async function prepareNamespace(admin: KubeClient, name: string): Promise<void> {
  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  await admin.create({
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'og', namespace: name },
    spec: { targetNamespaces: [name] },
  });
}

/**
 * The CSVs that reached phase Succeeded, from one watch of every namespace (opened again from
 * the last version seen when the server ends it).
 */
export class SucceededCsvs {
  private readonly done = new Set<string>();
  private readonly waiters = new Map<string, () => void>();
  private resourceVersion: string | undefined;
  private stream: WatchStream | undefined;
  private stopped = false;

  private constructor(private readonly admin: KubeClient) {}

  static async open(admin: KubeClient): Promise<SucceededCsvs> {
    const csvs = new SucceededCsvs(admin);
    await csvs.watch();
    return csvs;
  }

  /** Resolves once CSV `name` in `namespace` has succeeded. */
  succeeded(namespace: string, name: string): Promise<void> {
    const key = `${namespace}/${name}`;
    if (this.done.has(key)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.set(key, resolve));
  }

  stop(): void {
    this.stopped = true;
    this.stream?.stop();
  }

  private async watch(): Promise<void> {
    const query =
      this.resourceVersion === undefined ? {} : { resourceVersion: this.resourceVersion };
    const stream = await this.admin.watch(csvRef, query, (event) => this.seen(event));
    this.stream = stream;
    stream.ended.then(
      () => this.again(),
      () => {
        // Broken off (or 410 Gone on reopening): start from the present state again.
        this.resourceVersion = undefined;
        this.again();
      },
    );
  }

  private again(): void {
    if (this.stopped) return;
    this.watch().catch((error: unknown) => {
      process.stderr.write(`CSV watch failed: ${String(error)}\n`);
      this.resourceVersion = undefined;
      setTimeout(() => this.again(), 100);
    });
  }

  private seen(event: WatchEvent): void {
    const object = event.object as KubeObject & { status?: { phase?: string } };
    if (event.type === 'ERROR') {
      this.resourceVersion = undefined;
      return;
    }
    this.resourceVersion = object.metadata.resourceVersion ?? this.resourceVersion;
    if (event.type === 'BOOKMARK' || object.status?.phase !== 'Succeeded') return;
    const key = `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
    this.done.add(key);
    this.waiters.get(key)?.();
    this.waiters.delete(key);
  }
}

/** Creates the Subscription and resolves with the ms until its CSV is Succeeded. */
export async function subscribe(
  admin: KubeClient,
  csvs: SucceededCsvs,
  ns: string,
  pkg: BenchPackage,
): Promise<number> {
  const t0 = performance.now();
  const succeeded = csvs.succeeded(ns, pkg.csv);
  await admin.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name: pkg.name, namespace: ns },
    spec: {
      name: pkg.name,
      channel: pkg.channel,
      source: pkg.source ?? 'community',
      sourceNamespace: 'olm',
    },
  });
  await succeeded;
  return performance.now() - t0;
}

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** One decimal. */
export const round = (n: number): number => Math.round(n * 10) / 10;

/** Count, p50 and p99 of latencies in ms. */
export function summary(samples: number[]): { n: number; p50Ms: number; p99Ms: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
  };
}

/** `after - before` of each key, divided by `n`. */
export function perEach(
  after: Record<string, number>,
  before: Record<string, number>,
  n: number,
): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after).map(([k, v]) => [k, round((v - (before[k] ?? 0)) / n)]),
  );
}
