// The catalog function's decisions, pure: from what was observed of one CatalogSource (the
// object, its ConfigMap or registry objects, the outcome of reading the source, the index
// record and sync bookkeeping) to the writes that bring the cluster and the index records in
// line, and the status upstream's syncCatalogSources would write. Its types are in types.ts,
// the registry objects' part in registry-plan.ts, when to read a source in source-reads.ts.
import type { CatalogSource } from '../../shared/api/catalogsource.js';
import type { CatalogIndex } from '../../shared/catalog/index.js';
import type { CatalogIndexRecord } from '../../shared/handoff/index.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import { kubeTime } from '../../shared/kube/time.js';
import type { Decision } from '../../shared/runtime/function-host.js';
import { canonicalJson } from '../../shared/kube/json.js';
import { planRegistry, registrySourceOf } from './registry-plan.js';
import { managedLabel, registryServiceAddress } from './registry-pod.js';
import { rereadIntervalMs, summarizeWarnings } from './source-reads.js';
import { pollSettingOf, type SourceKind } from './spec.js';
import type {
  BuiltCatalog,
  CatalogSnapshot,
  CatalogStatus,
  CatalogWrites,
  SyncRecord,
} from './types.js';

/**
 * The ConfigMap with this CatalogSource as (non-blocking) owner and an olm.managed label, as
 * upstream adopts it; undefined when it already is. The label brings the ConfigMap into the
 * watcher's mirror (which lists ConfigMaps carrying olm.managed), so its changes reach us.
 */
export function adoptedConfigMap(configMap: KubeObject, owner: KubeObject): KubeObject | undefined {
  const owners = configMap.metadata.ownerReferences ?? [];
  const owned = owners.some((r) => r.uid === owner.metadata.uid);
  const labelled = configMap.metadata.labels?.[managedLabel] !== undefined;
  if (owned && labelled) return undefined;
  return {
    ...configMap,
    metadata: {
      ...configMap.metadata,
      labels: { ...configMap.metadata.labels, ...(labelled ? {} : { [managedLabel]: 'false' }) },
      ownerReferences: owned
        ? owners
        : [
            ...owners,
            {
              apiVersion: 'operators.coreos.com/v1alpha1',
              kind: 'CatalogSource',
              name: owner.metadata.name ?? '',
              uid: owner.metadata.uid ?? '',
              controller: false,
              blockOwnerDeletion: false,
            },
          ],
    },
  };
}

/** Decides the writes for one CatalogSource. */
export function decideCatalogSource(s: CatalogSnapshot): Decision<CatalogWrites> {
  if (s.object === undefined) return { writes: { kube: [], record: null, sync: null } };
  const object = s.object;
  const now = kubeTime(s.now);
  const current = (object['status'] ?? {}) as CatalogStatus;
  const status: CatalogStatus = structuredClone(current);
  delete status.reason;
  delete status.message;
  const kube: Write[] = [];
  let requeue: number | undefined;
  const requeueAt = (ms: number | undefined): void => {
    if (ms !== undefined) requeue = Math.min(requeue ?? Infinity, Math.max(0, ms));
  };
  let sync: SyncRecord | undefined;
  let built: BuiltCatalog | undefined;
  let state: string | undefined = current.connectionState?.lastObservedState;
  let address: string | undefined;
  let touchConnection = false;

  const fail = (reason: string, message: string): void => {
    status.reason = reason;
    status.message = message;
  };

  // Applies the outcome of reading the source to state, message and bookkeeping.
  const applyRead = (
    kind: SourceKind,
    spec: CatalogSource['spec'],
    where: string | undefined,
  ): void => {
    touchConnection = true;
    address = where;
    const read = s.read;
    const interval = rereadIntervalMs(kind, spec, s.timing);
    switch (read.kind) {
      case 'built': {
        built = read.built;
        const summary = summarizeWarnings(read.built.warnings);
        sync = {
          sourceVersion: read.built.sourceVersion,
          digest: read.built.index.digest,
          fetchedAt: now,
          summary,
        };
        state = 'READY';
        if (summary !== '') status.message = summary;
        requeueAt(interval);
        return;
      }
      case 'checked':
        // A poll found the same digest: nothing to build, the next poll counts from now.
        state = 'READY';
        if (s.sync !== undefined) {
          sync = { ...s.sync, fetchedAt: now };
          if (s.sync.summary !== '') status.message = s.sync.summary;
        }
        requeueAt(interval);
        return;
      case 'unreachable':
        state = 'TRANSIENT_FAILURE';
        fail(
          'RegistryServerError',
          `couldn't connect to registry at ${read.address}: ${read.message}`,
        );
        requeueAt(s.timing.retryMs);
        return;
      case 'unusable':
        state = 'TRANSIENT_FAILURE';
        fail(kind === 'configmap' ? 'ConfigMapError' : 'RegistryServerError', read.message);
        if (kind !== 'configmap') requeueAt(s.timing.retryMs);
        return;
      case 'none':
        state = 'READY';
        if (s.sync !== undefined && s.sync.summary !== '') status.message = s.sync.summary;
        if (interval !== undefined && s.sync !== undefined)
          requeueAt(Date.parse(s.sync.fetchedAt) + interval - s.now.getTime());
        return;
    }
  };

  const source = s.source;
  const kind = s.kind;
  if (s.invalid !== undefined || source === undefined || kind === undefined) {
    fail('SpecInvalidError', s.invalid ?? 'the CatalogSource spec cannot be read');
    state = undefined;
  } else if (kind === 'configmap') {
    const cmName = source.spec.configMap ?? '';
    const cm = s.configMap?.object;
    if (cm === undefined) {
      fail(
        'ConfigMapError',
        `failed to get catalog config map ${cmName}: ${s.configMap?.error ?? `configmaps "${cmName}" not found`}`,
      );
      requeueAt(s.timing.retryMs);
    } else {
      const adopted = adoptedConfigMap(cm, object);
      if (adopted !== undefined) {
        // Adopt first; the changed ConfigMap is read on the next round.
        kube.push({ op: 'update', object: adopted });
        requeueAt(0);
      } else {
        const ref = current.configMapReference;
        if (
          ref === undefined ||
          ref['uid'] !== cm.metadata.uid ||
          ref['resourceVersion'] !== cm.metadata.resourceVersion
        ) {
          status.configMapReference = {
            name: cm.metadata.name ?? cmName,
            namespace: cm.metadata.namespace ?? s.namespace,
            uid: cm.metadata.uid ?? '',
            resourceVersion: cm.metadata.resourceVersion ?? '',
            lastUpdateTime: now,
          };
        }
        applyRead(kind, source.spec, undefined);
        // A deleted ConfigMap cannot be traced to its catalog by the trigger: look again later.
        requeueAt(s.timing.resyncMs);
      }
    }
  } else if (kind === 'grpc-address') {
    status.registryService ??= { protocol: 'grpc', createdAt: now };
    applyRead(kind, source.spec, source.spec.address);
  } else if (kind === 'image') {
    // Read directly: no registry objects; the connection is the image itself.
    applyRead(kind, source.spec, source.spec.image);
    const polled = s.read.kind === 'built' || s.read.kind === 'checked';
    if (polled && pollSettingOf(source.spec) !== undefined) status.latestImageRegistryPoll = now;
  } else {
    const plan = planRegistry(
      registrySourceOf(object, source),
      s.registry ?? {
        serviceAccount: undefined,
        service: undefined,
        pods: [],
        updatePods: [],
        restrictedByDefault: false,
      },
      current,
      s.now,
      s.timing,
    );
    kube.push(...plan.writes);
    if (plan.registryService !== undefined) status.registryService = plan.registryService;
    if (plan.polled) status.latestImageRegistryPoll = now;
    requeueAt(plan.requeueAfterMs);
    const serviceAddress = registryServiceAddress(s.namespace, s.name);
    if (plan.servingPod === undefined) {
      touchConnection = true;
      address = serviceAddress;
      state = 'CONNECTING';
      requeueAt(s.timing.connectingRetryMs);
    } else {
      applyRead(kind, source.spec, serviceAddress);
    }
    if (plan.error !== undefined && status.reason === undefined)
      fail('RegistryServerError', plan.error);
  }

  if (source !== undefined && status.reason === undefined) {
    const parsingError = pollSettingOf(source.spec)?.parsingError;
    if (parsingError !== undefined) fail('InvalidIntervalError', parsingError);
  }

  if (touchConnection && state !== undefined) {
    const before = current.connectionState;
    const same = before?.address === address && before?.lastObservedState === state;
    status.connectionState = {
      ...(address === undefined ? {} : { address }),
      lastObservedState: state,
      lastConnect: same && before?.lastConnect !== undefined ? before.lastConnect : now,
    };
  }

  if (canonicalJson(status) !== canonicalJson(current))
    kube.push({ op: 'updateStatus', object: { ...object, status } });

  const spec = (object['spec'] ?? {}) as Partial<CatalogSource['spec']>;
  const builtIndex: CatalogIndex | undefined = built?.index;
  const digest = builtIndex?.digest ?? s.record?.digest ?? null;
  const record: CatalogIndexRecord = {
    namespace: s.namespace,
    name: s.name,
    digest,
    priority: typeof spec.priority === 'number' ? spec.priority : 0,
    displayName: spec.displayName ?? '',
    publisher: spec.publisher ?? '',
    sourceType: typeof spec.sourceType === 'string' ? spec.sourceType : '',
    healthy:
      s.invalid === undefined &&
      state === 'READY' &&
      (status.reason === undefined || status.reason === 'InvalidIntervalError'),
    updatedAt: s.record === undefined || s.record.digest !== digest ? now : s.record.updatedAt,
    packages: builtIndex?.packages.length ?? s.record?.packages ?? 0,
    bundles: builtIndex?.bundles.length ?? s.record?.bundles ?? 0,
    global: s.namespace === s.globalCatalogNamespace,
  };
  return {
    writes: {
      kube,
      record,
      ...(built === undefined ? {} : { built }),
      ...(sync === undefined ? {} : { sync }),
    },
    ...(requeue === undefined || !Number.isFinite(requeue) ? {} : { requeueAfterMs: requeue }),
  };
}
