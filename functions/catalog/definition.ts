// The catalog function (upstream: catalog-operator syncCatalogSources). Per CatalogSource
// (work key ["CatalogSource", ns, name]) it reads the source — a ConfigMap, a registry at an
// address, or the registry Pod it runs for an image — builds the catalog index, stores it by
// digest, publishes a CatalogIndex record for readers, and writes the status upstream writes.
// See README.md for the sources, status, metrics and configuration.
import { Kvm, type KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { z } from 'zod';
import { catalogSourceSchema } from '../../shared/api/catalogsource.js';
import { ObjectValidationError, parseObject } from '../../shared/api/validation.js';
import { encodeToken } from '../../shared/bus/subjects.js';
import { alignStream, newAssetReplicas } from '../../shared/bus/backbone.js';
import {
  CatalogError,
  buildCatalogIndex,
  type CatalogObject,
  type CatalogWarning,
} from '../../shared/catalog/index.js';
import {
  deleteCatalogIndexRecord,
  openCatalogStore,
  putCatalogIndexRecord,
  readCatalogIndexRecords,
  readCatalogIndexRecord,
  storeCatalog,
} from '../../shared/handoff/index.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { isNotFound } from '../../shared/kube/errors.js';
import { executeWrites } from '../../shared/kube/executor.js';
import type { FunctionDefinition, WorkContext, WorkItem } from '../../shared/runtime/types.js';
import type { NamespacedName } from '../../shared/runtime/work-keys.js';
import type {
  CreateFunction,
  FunctionContext,
  StartedFunction,
} from '../../shared/runtime/function-module.js';
import { fetchRegistryCatalog, type RegistryFetchOptions } from '../../shared/registry/client.js';
import type { RegistryClient } from '../../shared/oci/index.js';
import { catalogConfigFromEnv, defaultCatalogConfig, type CatalogConfig } from './config.js';
import { readConfigMapCatalog } from './configmap-catalog.js';
import { adoptedConfigMap, decideCatalogSource } from './decide.js';
import {
  catalogCredentials,
  imageAccessOf,
  imageModeOf,
  imageSourceVersion,
  readImageCatalog,
} from './image-source.js';
import { createCatalogMetrics, type CatalogMetrics } from './metrics.js';
import { planRegistry, registrySourceOf } from './registry-plan.js';
import {
  catalogSourceLabel,
  catalogSourceUpdateLabel,
  networkPolicyNames,
  podSecurityEnforceLabel,
  registryServiceAddress,
  registryServiceName,
} from './registry-pod.js';
import {
  readNeeded,
  rereadIntervalMs,
  sourceVersionOf,
  summarizeWarnings,
} from './source-reads.js';
import { sourceKindOf, type SourceKind } from './spec.js';
import type {
  BuiltCatalog,
  CatalogSnapshot,
  CatalogStatus,
  CatalogWrites,
  RegistryObservation,
  SourceRead,
  SyncRecord,
} from './types.js';
import { catalogSourceKey } from './keys.js';
import { failCatalogSourceOnDeadWork } from './give-up.js';

/** KV bucket of the catalog function's bookkeeping (what each served index was read from). */
export const catalogSyncBucket = 'olmq_catalog_syncs';

/** Field manager of the catalog function's writes. */
export const catalogFieldManager = 'olmq-catalog';

/** Reads a registry's whole catalog (shared/registry/client.ts's fetchRegistryCatalog). */
export type RegistryCatalogFetcher = (options: RegistryFetchOptions) => Promise<CatalogObject[]>;

/** Options of the catalog function beyond its configuration. */
export interface CatalogFunctionOptions {
  config?: Partial<CatalogConfig>;
  /** Reads a registry; fetchRegistryCatalog unless replaced (e.g. by a test's stand-in). */
  fetchCatalog?: RegistryCatalogFetcher;
  /** Reads catalog images; built from the configuration unless given (e.g. with a test CA). */
  registryClient?: RegistryClient;
}

type CatalogWork = WorkContext<NamespacedName>;

const catalogSourceRef = (namespace: string, name: string) => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'CatalogSource',
  namespace,
  name,
});

// The CatalogSources a changed object belongs to, from its owner references.
function ownerKeys(object: unknown, namespace: string): WorkItem[] {
  const owners = (object as KubeObject | undefined)?.metadata?.ownerReferences ?? [];
  return owners
    .filter((o) => o.kind === 'CatalogSource' && o.apiVersion.startsWith('operators.coreos.com/'))
    .map((o) => catalogSourceKey.of({ namespace, name: o.name }));
}

// A deleted pod's mirror entry is a bare delete marker, so its owner is unknown: registry pods
// are named <catalog source>-<5 random characters> (generateName), which names the owner.
function registryPodKeys(object: unknown, namespace: string, name: string): WorkItem[] {
  if (object !== undefined) return ownerKeys(object, namespace);
  const owner = /^(.+)-[a-z0-9]{5}$/.exec(name)?.[1];
  return owner === undefined ? [] : [catalogSourceKey.of({ namespace, name: owner })];
}

function syncKey(cluster: string, namespace: string, name: string): string {
  return [encodeToken(cluster), encodeToken(namespace), encodeToken(name)].join('.');
}

const SyncRecordSchema = z.object({
  sourceVersion: z.string(),
  digest: z.string(),
  fetchedAt: z.string(),
  summary: z.string(),
});

// Bookkeeping that does not parse (an older layout) is as good as none: the source is read again.
async function readSync(syncs: KV, key: string): Promise<SyncRecord | undefined> {
  const entry = await syncs.get(key);
  if (entry === null || entry.operation !== 'PUT') return undefined;
  const parsed = SyncRecordSchema.safeParse(entry.json());
  return parsed.success ? parsed.data : undefined;
}

// Indexes catalog objects; a catalog left without any package while data was dropped is unusable.
function indexObjects(
  objects: CatalogObject[],
  extraWarnings: readonly CatalogWarning[],
  sourceVersion: string,
  what: string,
): SourceRead {
  const started = performance.now();
  let result: ReturnType<typeof buildCatalogIndex>;
  try {
    result = buildCatalogIndex(objects);
  } catch (error) {
    return {
      kind: 'unusable',
      message: `${what} is not a usable catalog: ${(error as Error).message}`,
    };
  }
  const warnings = [...extraWarnings, ...result.warnings];
  if (result.index.packages.length === 0 && warnings.length > 0) {
    return {
      kind: 'unusable',
      message: `${what} has no usable package: ${summarizeWarnings(warnings)}`,
    };
  }
  const built: BuiltCatalog = {
    sourceVersion,
    index: result.index,
    content: result.content,
    warnings,
    durationMs: performance.now() - started,
  };
  return { kind: 'built', built };
}

/** Starts the catalog function with explicit options (tests; createFunction reads the env). */
export async function startCatalogFunction(
  context: FunctionContext,
  options: CatalogFunctionOptions = {},
): Promise<StartedFunction> {
  const config: CatalogConfig = { ...defaultCatalogConfig, ...options.config };
  const fetchCatalog = options.fetchCatalog ?? fetchRegistryCatalog;
  const images = await imageAccessOf(config, options.registryClient);
  const { backbone, log } = context;
  const store = await openCatalogStore(backbone);
  const syncs = await new Kvm(backbone.js).create(catalogSyncBucket, {
    history: 1,
    replicas: newAssetReplicas(backbone.options),
  });
  // An existing bucket keeps its config through create: bring its replicas in line (no byte limit).
  await alignStream(backbone.jsm, `KV_${catalogSyncBucket}`, backbone.options, -1);
  const metrics: CatalogMetrics = createCatalogMetrics(context.registry, () =>
    Promise.all(
      [...context.clients.keys()].map(async (cluster) => ({
        cluster,
        records: await readCatalogIndexRecords(backbone, cluster),
      })),
    ),
  );
  const timing = {
    resyncMs: config.resyncMs,
    retryMs: config.retryMs,
    connectingRetryMs: config.connectingRetryMs,
    updatePodRequeueMs: config.updatePodRequeueMs,
  };

  const fetchFrom = async (
    address: string,
    dial: string,
    sourceVersion: string,
    work: CatalogWork,
  ): Promise<SourceRead> => {
    let objects: CatalogObject[];
    try {
      objects = await fetchCatalog({
        address: dial,
        signal: work.signal,
        timeoutMs: config.fetchTimeoutMs,
      });
    } catch (error) {
      if (error instanceof CatalogError)
        return {
          kind: 'unusable',
          message: `registry at ${address} serves an unusable catalog: ${error.message}`,
        };
      return { kind: 'unreachable', address, message: (error as Error).message };
    }
    return indexObjects(objects, [], sourceVersion, `the catalog served at ${address}`);
  };

  const load = async (work: CatalogWork): Promise<CatalogSnapshot> => {
    const { namespace, name } = work.key;
    const client = work.client;
    const at = work.now();
    const [object, record, sync] = await Promise.all([
      client.get(catalogSourceRef(namespace, name)),
      readCatalogIndexRecord(backbone, work.cluster, namespace, name),
      readSync(syncs, syncKey(work.cluster, namespace, name)),
    ]);
    const snapshot: CatalogSnapshot = {
      cluster: work.cluster,
      namespace,
      name,
      now: at,
      globalCatalogNamespace: context.globalCatalogNamespace,
      timing,
      object,
      source: undefined,
      invalid: undefined,
      kind: undefined,
      read: { kind: 'none' },
      sync,
      record,
    };
    if (object === undefined) return snapshot;
    try {
      snapshot.source = parseObject(catalogSourceSchema, object, 'CatalogSource');
    } catch (error) {
      if (!(error instanceof ObjectValidationError)) throw error;
      snapshot.invalid = error.message;
      return snapshot;
    }
    const parsedKind = sourceKindOf(snapshot.source.spec);
    if (parsedKind instanceof Error) {
      snapshot.invalid = parsedKind.message;
      return snapshot;
    }
    const kind: SourceKind =
      parsedKind === 'grpc-image' && imageModeOf(object, config.imageMode) === 'direct'
        ? 'image'
        : parsedKind;
    snapshot.kind = kind;
    const spec = snapshot.source.spec;
    const status = (object['status'] ?? {}) as CatalogStatus;
    const needed = (version: string): boolean =>
      readNeeded({
        version,
        sync,
        record,
        observedState: status.connectionState?.lastObservedState,
        now: at,
        intervalMs: rereadIntervalMs(kind, spec, timing),
      });

    if (kind === 'configmap') {
      const cmName = spec.configMap ?? '';
      let cm: KubeObject | undefined;
      try {
        cm = await client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: cmName });
        snapshot.configMap = { object: cm };
      } catch (error) {
        snapshot.configMap = { object: undefined, error: (error as Error).message };
      }
      if (cm !== undefined && adoptedConfigMap(cm, object) === undefined) {
        const version = sourceVersionOf(kind, spec, { configMap: cm });
        if (needed(version)) snapshot.read = readConfigMap(cmName, cm, version);
      }
      return snapshot;
    }
    if (kind === 'grpc-address') {
      const address = spec.address ?? '';
      const version = sourceVersionOf(kind, spec, {});
      if (needed(version)) snapshot.read = await fetchFrom(address, address, version, work);
      return snapshot;
    }
    if (kind === 'image') {
      const image = spec.image ?? '';
      const unknown = imageSourceVersion(image, '');
      const served =
        sync?.sourceVersion.startsWith(unknown) === true ? sync.sourceVersion : undefined;
      if (!needed(served ?? unknown)) return snapshot;
      // While the served index is current and healthy, a HEAD decides whether to pull.
      const healthy =
        record?.digest === sync?.digest && status.connectionState?.lastObservedState === 'READY';
      snapshot.read = await readImageCatalog({
        client: images.client,
        image,
        served: healthy ? served : undefined,
        credentials: () =>
          catalogCredentials(client, { namespace, name, spec }, images.credentials),
        index: (objects, version, what) => indexObjects(objects, [], version, what),
      });
      return snapshot;
    }
    const registry = await observeRegistry(client, namespace, name);
    snapshot.registry = registry;
    const plan = planRegistry(
      registrySourceOf(object, snapshot.source),
      registry,
      status,
      at,
      timing,
    );
    if (plan.servingPod !== undefined) {
      const version = sourceVersionOf(kind, spec, { servingPod: plan.servingPod });
      const address = registryServiceAddress(namespace, name);
      const dial =
        config.registryAddresses.get(`${namespace}/${registryServiceName(name)}`) ?? address;
      if (needed(version)) snapshot.read = await fetchFrom(address, dial, version, work);
    }
    return snapshot;
  };

  const apply = async (writes: CatalogWrites, work: CatalogWork): Promise<void> => {
    const { namespace, name } = work.key;
    const key = syncKey(work.cluster, namespace, name);
    if (writes.built !== undefined) {
      const { built } = writes;
      await storeCatalog(store, built.index, built.content);
      reportBuild(metrics, work, built, writes.record?.sourceType ?? '');
    }
    if (writes.sync === null) await syncs.delete(key);
    else if (writes.sync !== undefined) await syncs.put(key, JSON.stringify(writes.sync));
    if (writes.record === null)
      await deleteCatalogIndexRecord(backbone, work.cluster, namespace, name);
    else if (writes.record !== undefined)
      await putCatalogIndexRecord(backbone, work.cluster, writes.record);
    if (writes.kube.length > 0) {
      await executeWrites(work.client, writes.kube, catalogFieldManager);
      work.log.debug(
        { writes: writes.kube.map((w) => w.op) },
        'catalog source reconciled with writes',
      );
    }
  };

  const definition: FunctionDefinition<NamespacedName, CatalogSnapshot, CatalogWrites> = {
    key: catalogSourceKey,
    triggers: [
      {
        kind: 'CatalogSource',
        workKeys: (c) => [catalogSourceKey.of({ namespace: c.ref.namespace, name: c.ref.name })],
      },
      // ConfigMaps the function adopted carry the CatalogSource as owner (and olm.managed,
      // which brings them into the mirror): a change of one re-reads its catalog.
      { kind: 'ConfigMap', workKeys: (c) => ownerKeys(c.object, c.ref.namespace) },
      // Registry pods (owned by their CatalogSource): a pod that became ready or was deleted.
      { kind: 'Pod', workKeys: (c) => registryPodKeys(c.object, c.ref.namespace, c.ref.name) },
    ],
    load,
    decide: decideCatalogSource,
    apply,
    giveUp: failCatalogSourceOnDeadWork,
  };
  log.info(
    { registryAddresses: Object.fromEntries(config.registryAddresses) },
    'catalog function started',
  );
  return { definitions: [definition] };
}

function readConfigMap(cmName: string, cm: KubeObject, version: string): SourceRead {
  const started = performance.now();
  let catalog: ReturnType<typeof readConfigMapCatalog>;
  try {
    catalog = readConfigMapCatalog(cmName, cm['data'] as Record<string, string> | undefined);
  } catch (error) {
    return { kind: 'unusable', message: (error as Error).message };
  }
  const read = indexObjects(catalog.objects, catalog.warnings, version, `configmap ${cmName}`);
  if (read.kind === 'built') read.built.durationMs = performance.now() - started;
  return read;
}

async function observeRegistry(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<RegistryObservation> {
  const podRef = { apiVersion: 'v1', kind: 'Pod', namespace };
  const policyNames = networkPolicyNames(name);
  // A cluster without the NetworkPolicy API gets none.
  const policiesServed = await client.resource('networking.k8s.io/v1', 'NetworkPolicy').then(
    () => true,
    (error: unknown) => {
      if (isNotFound(error)) return false;
      throw error;
    },
  );
  const policy = async (policyName: string) =>
    !policiesServed
      ? undefined
      : client.get({
          apiVersion: 'networking.k8s.io/v1',
          kind: 'NetworkPolicy',
          namespace,
          name: policyName,
        });
  const [serviceAccount, service, pods, updatePods, ns, grpcServer, unpackBundles] =
    await Promise.all([
      client.get({ apiVersion: 'v1', kind: 'ServiceAccount', namespace, name }),
      client.get({ apiVersion: 'v1', kind: 'Service', namespace, name: registryServiceName(name) }),
      client.list(podRef, { labelSelector: `${catalogSourceLabel}=${name}` }),
      client.list(podRef, { labelSelector: `${catalogSourceUpdateLabel}=${name}` }),
      client.get({ apiVersion: 'v1', kind: 'Namespace', name: namespace }),
      policy(policyNames.grpcServer),
      policy(policyNames.unpackBundles),
    ]);
  const networkPolicies = new Map<string, KubeObject>();
  if (grpcServer !== undefined) networkPolicies.set(policyNames.grpcServer, grpcServer);
  if (unpackBundles !== undefined) networkPolicies.set(policyNames.unpackBundles, unpackBundles);
  return {
    serviceAccount,
    service,
    pods: pods.items,
    updatePods: updatePods.items,
    restrictedByDefault: ns?.metadata.labels?.[podSecurityEnforceLabel] === 'restricted',
    ...(policiesServed ? { networkPolicies } : {}),
  };
}

function reportBuild(
  metrics: CatalogMetrics,
  work: CatalogWork,
  built: BuiltCatalog,
  sourceType: string,
): void {
  const { namespace, name } = work.key;
  metrics.snapshots.inc({ cluster: work.cluster, namespace, name });
  metrics.buildDuration.observe(
    { cluster: work.cluster, source_type: sourceType },
    built.durationMs / 1000,
  );
  for (const w of built.warnings) metrics.warnings.inc({ cluster: work.cluster, code: w.code });
  logWarnings(work.log, built.warnings);
  work.log.info(
    {
      digest: built.index.digest,
      packages: built.index.packages.length,
      bundles: built.index.bundles.length,
      warnings: built.warnings.length,
      durationMs: Math.round(built.durationMs),
    },
    'catalog indexed',
  );
}

const loggedWarnings = 50;

function logWarnings(log: Logger, warnings: readonly CatalogWarning[]): void {
  for (const w of warnings.slice(0, loggedWarnings)) log.warn({ warning: w }, 'catalog warning');
  if (warnings.length > loggedWarnings)
    log.warn({ omitted: warnings.length - loggedWarnings }, 'more catalog warnings not logged');
}

/** The catalog function as `olmq run catalog` / `olmq up` host it (configured from the env). */
export const createFunction: CreateFunction = (context) =>
  startCatalogFunction(context, { config: catalogConfigFromEnv(process.env) });

export type { SourceKind };
