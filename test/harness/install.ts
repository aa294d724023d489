// Test fixture: a devcluster with the OLM API, a real nats-server, the watcher mirroring every
// kind, and the install function's definitions running in function hosts, with the rbac
// function (which syncs OperatorGroups and annotates CSVs, as the install function expects) —
// torn down with the test.
import type { Registry } from 'prom-client';
import type { Test } from 'tap';
import { installFunction } from '../../functions/install/index.js';
import { createFunction as createRbac } from '../../functions/rbac/index.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import type { ClusterFixture } from './devcluster.js';
import { capturingLogger } from './log.js';
import { systemFor } from './system.js';
import { waitFor } from './wait.js';

/** A running install function and its cluster. */
export interface InstallFixture {
  fixture: ClusterFixture;
  client: KubeClient;
  registry: Registry;
  lines: Record<string, unknown>[];
  /** The NATS server the system uses (for the CLI). */
  natsUrl: string;
}

/** Starts cluster, backbone, watcher, the install function (with `options`, see install/options.ts) and the rbac function. */
export async function installFunctionFor(t: Test, options: unknown = {}): Promise<InstallFixture> {
  const { log, lines } = capturingLogger('info');
  const { system, fixture, client } = await systemFor(t, {
    log,
    backbone: { leaseTtlMs: 2_000 },
    namespaces: ['olmq-system'],
    watcher: { identity: 'test-watcher', leaseName: 'olmq-watcher' },
    functions: {
      table: {
        install: () => Promise.resolve(installFunction(options)),
        rbac: () => Promise.resolve(createRbac),
      },
      host: { baseBackoffMs: 20, contentionDelayMs: 20, random: () => 0.5 },
      stopGraceMs: 1_000,
    },
  });
  return { fixture, client, registry: system.registry, lines, natsUrl: system.natsUrl };
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
