// Test fixture: a devcluster with the OLM API, a real nats-server, the watcher mirroring every
// kind, and the install function's definitions running in function hosts, with the rbac
// function (which syncs OperatorGroups and annotates CSVs, as the install function expects) —
// torn down with the test.
import { Registry } from 'prom-client';
import type { Test } from 'tap';
import { installFunction } from '../../functions/install/index.js';
import { createFunction as createRbac } from '../../functions/rbac/index.js';
import { startWatcher } from '../../watcher/index.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { FunctionHost } from '../../shared/runtime/function-host.js';
import { createFunctionMetrics } from '../../shared/runtime/metrics.js';
import type { ClusterFixture } from './devcluster.js';
import { backboneFor, clusterFor } from './backbone.js';
import { capturingLogger } from './log.js';
import { waitFor } from './wait.js';

/** A running install function and its cluster. */
export interface InstallFixture {
  fixture: ClusterFixture;
  client: KubeClient;
  registry: Registry;
  lines: Record<string, unknown>[];
}

/** Starts cluster, backbone, watcher, the install function (with `options`, see install/options.ts) and the rbac function. */
export async function installFunctionFor(t: Test, options: unknown = {}): Promise<InstallFixture> {
  const { fixture, client } = await clusterFor(t);
  const backbone = await backboneFor(t, { leaseTtlMs: 2_000 });
  const { log, lines } = capturingLogger('info');
  const watcher = await startWatcher({
    cluster: { id: 'c1', kubeConfig: fixture.kubeConfig },
    backbone,
    log,
    registry: new Registry(),
    identity: 'test-watcher',
    leaseNamespace: 'olmq-system',
    leaseName: 'olmq-watcher',
    leaseDurationSeconds: 15,
  });
  t.teardown(() => watcher.stop());
  const registry = new Registry();
  const abort = new AbortController();
  const context = {
    backbone,
    clients: new Map([['c1', client]]),
    log,
    registry,
    globalCatalogNamespace: 'olm',
    signal: abort.signal,
  };
  const started = await Promise.all([installFunction(options)(context), createRbac(context)]);
  const metrics = createFunctionMetrics(registry);
  const hosts = started
    .flatMap((f) => f.definitions)
    .map(
      (d) =>
        new FunctionHost(backbone, d, log, metrics, {
          baseBackoffMs: 20,
          contentionDelayMs: 20,
          random: () => 0.5,
        }),
    );
  for (const host of hosts) await host.start();
  t.teardown(async () => {
    abort.abort();
    await Promise.all(hosts.map((h) => h.stop(1_000)));
    for (const f of started) await f.close?.();
  });
  return { fixture, client, registry, lines };
}

/** Creates a namespace with one OperatorGroup (targeting `targets`, own namespace by default). */
export async function namespaceWithOperatorGroup(
  client: KubeClient,
  namespace: string,
  spec: Record<string, unknown> = { targetNamespaces: [namespace] },
): Promise<void> {
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  await client.create({
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'og', namespace },
    spec,
  });
}

const csvRef = (namespace: string, name: string) => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  namespace,
  name,
});

/** Reads a CSV (undefined when absent). */
export function getCsv(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<
  | (KubeObject & {
      status?: {
        phase?: string;
        reason?: string;
        message?: string;
        conditions?: { phase?: string; reason?: string }[];
      };
    })
  | undefined
> {
  return client.get(csvRef(namespace, name));
}

/** Waits for a CSV to reach `phase` (and `reason`, when given). */
export async function waitForCsvPhase(
  client: KubeClient,
  namespace: string,
  name: string,
  phase: string,
  reason?: string,
  timeoutMs = 20_000,
): Promise<KubeObject> {
  let last = '';
  try {
    return await waitFor(
      `CSV ${namespace}/${name} to be ${phase}${reason === undefined ? '' : `/${reason}`}`,
      async () => {
        const csv = await getCsv(client, namespace, name);
        last = `${csv?.status?.phase ?? '(none)'}/${csv?.status?.reason ?? ''}: ${csv?.status?.message ?? ''}`;
        return csv?.status?.phase === phase &&
          (reason === undefined || csv.status.reason === reason)
          ? csv
          : undefined;
      },
      timeoutMs,
      25,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; last seen ${last}`, { cause: error });
  }
}

/** Reads an InstallPlan's status. */
export async function installPlanStatus(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<
  | {
      phase?: string;
      message?: string;
      plan?: { status: string; resource: { kind: string; name: string } }[];
      conditions?: { type?: string; status?: string; reason?: string; message?: string }[];
    }
  | undefined
> {
  const ip = await client.get({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'InstallPlan',
    namespace,
    name,
  });
  return ip?.['status'] as never;
}
