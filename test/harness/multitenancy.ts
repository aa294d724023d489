// Test fixture for the rbac and copy-csv functions: a devcluster with the OLM API, a real
// nats-server, the watcher mirroring every kind, and both functions hosted; plus real CSVs
// from catalogs/example installed the way the install function would leave them.
import { join } from 'node:path';
import { Registry } from 'prom-client';
import type { Test } from 'tap';
import { createFunction as createCopyCsv } from '../../functions/copy-csv/index.js';
import { createFunction as createRbac } from '../../functions/rbac/index.js';
import { assets, type Backbone } from '../../shared/bus/backbone.js';
import { mirrorStream } from '../../shared/bus/subjects.js';
import { triggerConsumerName, workConsumerName } from '../../shared/bus/work-queue.js';
import {
  buildCatalogIndex,
  decodeBundleManifests,
  readCatalogDirectory,
} from '../../shared/catalog/index.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { FunctionHost } from '../../shared/runtime/function-host.js';
import type { CreateFunction, FunctionContext } from '../../shared/runtime/function-module.js';
import { createFunctionMetrics } from '../../shared/runtime/metrics.js';
import { backboneFor, clusterFor } from './backbone.js';
import type { ClusterFixture } from './devcluster.js';
import { capturingLogger } from './log.js';
import { smallCatalog } from './repo.js';
import { waitFor } from './wait.js';
import { watcherFor } from './watcher.js';

/** A running multitenancy fixture. */
export interface Multitenancy {
  fixture: ClusterFixture;
  client: KubeClient;
  backbone: Backbone;
  registry: Registry;
  /** Log lines of both functions (JSON, parsed). */
  lines: Record<string, unknown>[];
  /** The two hosted functions (every definition of each), which a test may stop and start again. */
  hosts: { rbac: HostedFunction; copyCsv: HostedFunction };
}

/** A function the fixture hosts. */
export interface HostedFunction {
  /** Stops its hosts (their durable consumers stay, and keep collecting work and changes). */
  stop(): Promise<void>;
  /** Starts new hosts of it, resuming from their consumers' positions. */
  start(): Promise<void>;
  /** Whether none of its consumers holds anything undelivered or unacknowledged. */
  idle(): Promise<boolean>;
}

/** Starts cluster, NATS, watcher, rbac and copy-csv; all stopped at t's teardown. */
export async function startMultitenancy(t: Test): Promise<Multitenancy> {
  const { fixture, client } = await clusterFor(t);
  const backbone = await backboneFor(t, { leaseTtlMs: 3_000 });
  const { log, lines } = capturingLogger(process.env['OLMQ_TEST_LOGS'] === '1' ? 'debug' : 'warn');
  // Failures come with the functions' warnings, which say why.
  t.teardown(() => {
    if (process.env['OLMQ_TEST_LOGS'] === '1' || !t.passing()) {
      for (const line of lines.slice(-30))
        process.stderr.write(`${JSON.stringify(line).slice(0, 800)}\n`);
    }
  });
  const registry = new Registry();
  const watcher = await watcherFor(t, fixture, backbone, { log, registry, identity: 'w1' });
  await watcher.synced();
  const clients = new Map([['c1', client]]);
  const metrics = createFunctionMetrics(registry);
  const hostOptions = { baseBackoffMs: 50, contentionDelayMs: 20, concurrency: 8 };
  const context: FunctionContext = {
    backbone,
    clients,
    log,
    registry,
    globalCatalogNamespace: 'olm',
    signal: new AbortController().signal,
  };
  const hosted = async (name: string, create: CreateFunction): Promise<HostedFunction> => {
    const started = await create(context);
    const { definitions } = started;
    let running: FunctionHost<unknown, unknown, unknown>[] = [];
    const consumers = definitions.flatMap(({ key, triggers }) => [
      { stream: assets.workStream, name: workConsumerName(key.queue, 'c1') },
      ...triggers.map((trigger) => ({
        stream: mirrorStream,
        name: triggerConsumerName(key.queue, trigger.kind, 'c1'),
      })),
    ]);
    const stop = async (): Promise<void> => {
      await Promise.all(running.map((host) => host.stop(1_000)));
      running = [];
    };
    t.teardown(async () => {
      await stop();
      await started.close?.();
    });
    return {
      stop,
      async start() {
        if (running.length > 0) throw new Error(`${name} is running already`);
        running = definitions.map(
          (definition) =>
            new FunctionHost<unknown, unknown, unknown>(
              backbone,
              definition,
              log,
              metrics,
              hostOptions,
              clients,
            ),
        );
        for (const host of running) await host.start();
      },
      async idle() {
        for (const { stream, name } of consumers) {
          const info = await backbone.jsm.consumers.info(stream, name);
          if (info.num_pending > 0 || info.num_ack_pending > 0) return false;
        }
        return true;
      },
    };
  };
  const hosts = {
    rbac: await hosted('rbac', createRbac),
    copyCsv: await hosted('copy-csv', createCopyCsv),
  };
  await hosts.rbac.start();
  await hosts.copyCsv.start();
  return { fixture, client, backbone, registry, lines, hosts };
}

const bundleCache = new Map<string, KubeObject>();

/** The CSV of bundle `name` of package `pkg` in the small catalogs. */
export async function bundleCsv(pkg: string, name: string): Promise<KubeObject> {
  const key = `${pkg}/${name}`;
  const cached = bundleCache.get(key);
  if (cached !== undefined) return structuredClone(cached);
  const { content } = buildCatalogIndex(await readCatalogDirectory(join(smallCatalog, pkg)));
  const bundle = content.get(pkg, name);
  if (bundle === undefined) throw new Error(`no bundle ${name} in package ${pkg}`);
  const csv = decodeBundleManifests(bundle).csv;
  if (csv === undefined) throw new Error(`bundle ${name} has no CSV`);
  bundleCache.set(key, csv as KubeObject);
  return structuredClone(csv as KubeObject);
}

interface OwnedCrd {
  name: string;
  version: string;
  kind: string;
}

/** Minimal v1 CRDs for the CSV's owned CRDs (old bundles ship v1beta1 ones). */
export async function createOwnedCrds(client: KubeClient, csv: KubeObject): Promise<void> {
  const owned =
    (csv['spec'] as { customresourcedefinitions?: { owned?: OwnedCrd[] } })
      .customresourcedefinitions?.owned ?? [];
  for (const crd of owned) {
    const [plural = '', ...rest] = crd.name.split('.');
    const group = rest.join('.');
    const existing = await client.get({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name: crd.name,
    });
    if (existing !== undefined) continue;
    await client.create({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: crd.name },
      spec: {
        group,
        scope: 'Namespaced',
        names: {
          plural,
          singular: crd.kind.toLowerCase(),
          kind: crd.kind,
          listKind: `${crd.kind}List`,
        },
        versions: [
          {
            name: crd.version,
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        ],
      },
    });
  }
}

/**
 * Creates the CSV in `namespace` and sets its phase with a status update, as the install
 * function would; returns the created CSV.
 */
export async function installCsv(
  client: KubeClient,
  csv: KubeObject,
  namespace: string,
  phase = 'Succeeded',
  reason = 'InstallSucceeded',
): Promise<KubeObject> {
  const { status: _status, ...body } = csv;
  const created = await client.create({ ...body, metadata: { ...csv.metadata, namespace } });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return client.updateStatus({
    ...created,
    status: {
      phase,
      reason,
      message: 'install strategy completed with no errors',
      lastUpdateTime: now,
      lastTransitionTime: now,
    },
  });
}

/** The Roles and RoleBindings the install function creates for the CSV's permissions. */
export async function createPermissionRbac(client: KubeClient, csv: KubeObject): Promise<void> {
  const ns = csv.metadata.namespace ?? '';
  const name = csv.metadata.name ?? '';
  const perms =
    (
      csv['spec'] as {
        install?: { spec?: { permissions?: { serviceAccountName: string; rules: unknown[] }[] } };
      }
    ).install?.spec?.permissions ?? [];
  const labels = {
    'olm.owner': name,
    'olm.owner.namespace': ns,
    'olm.owner.kind': 'ClusterServiceVersion',
    'olm.managed': 'true',
  };
  const ownerReferences = [
    {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      name,
      uid: csv.metadata.uid ?? '',
      blockOwnerDeletion: false,
      controller: false,
    },
  ];
  for (const [i, perm] of perms.entries()) {
    const roleName = `${name}-${i}`;
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: roleName, namespace: ns, labels, ownerReferences },
      rules: perm.rules,
    });
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: roleName, namespace: ns, labels, ownerReferences },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: roleName },
      subjects: [{ kind: 'ServiceAccount', name: perm.serviceAccountName, namespace: ns }],
    });
  }
}

/** Creates a namespace with labels. */
export async function createNamespace(
  client: KubeClient,
  name: string,
  labels: Record<string, string> = {},
): Promise<void> {
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
}

/** Creates an OperatorGroup. */
export async function createOperatorGroup(
  client: KubeClient,
  namespace: string,
  name: string,
  spec: Record<string, unknown> = {},
  annotations: Record<string, string> = {},
): Promise<KubeObject> {
  return client.create({
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name, namespace, annotations },
    spec,
  });
}

/** Reads an object through the API. */
export function read<T extends KubeObject = KubeObject>(
  client: KubeClient,
  kind: string,
  apiVersion: string,
  namespace: string | undefined,
  name: string,
): Promise<T | undefined> {
  return client.get<T>({ apiVersion, kind, namespace, name });
}

/** Waits for the rbac function to write the OperatorGroup's status (its target namespaces). */
export async function waitForGroupStatus(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<void> {
  await waitForObject(
    client,
    `status of group ${namespace}/${name}`,
    { kind: 'OperatorGroup', apiVersion: 'operators.coreos.com/v1', namespace, name },
    (g) => Array.isArray((g?.['status'] as { namespaces?: unknown } | undefined)?.namespaces),
  );
}

/** Waits until `check` of the object passes. */
export async function waitForObject<T extends KubeObject = KubeObject>(
  client: KubeClient,
  what: string,
  ref: { kind: string; apiVersion: string; namespace?: string; name: string },
  check: (object: T | undefined) => boolean,
  // Generous: the shared 2-core machine is often loaded far beyond its cores.
  timeoutMs = 60_000,
): Promise<T | undefined> {
  let last: T | undefined;
  await waitFor(
    what,
    async () => {
      last = await client.get<T>({
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        namespace: ref.namespace,
        name: ref.name,
      });
      return check(last);
    },
    timeoutMs,
    50,
  );
  return last;
}
