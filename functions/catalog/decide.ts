// The catalog function's decisions, pure: from what was observed of one CatalogSource (the
// object, its ConfigMap or registry objects, the outcome of reading the source, the index
// record and sync bookkeeping) to the writes that bring the cluster and the index records in
// line, and the status upstream's syncCatalogSources would write.
import type { CatalogSource } from '../../shared/api/catalogsource.js';
import type { CatalogContent, CatalogIndex, CatalogWarning } from '../../shared/catalog/index.js';
import type { CatalogIndexRecord } from '../../shared/handoff/index.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import type { Decision } from '../../shared/runtime/function-host.js';
import {
  catalogSourceLabel,
  catalogSourceUpdateLabel,
  managedLabel,
  podFailed,
  podImageId,
  podMatches,
  podReady,
  registryNetworkPolicies,
  registryPod,
  registryPort,
  registryService,
  registryServiceAccount,
  registryServiceAddress,
  registryServiceName,
  registryUpdatePod,
  serviceSpecHashLabel,
  type RegistrySource,
} from './registry-pod.js';
import { pollSettingOf, type SourceKind } from './spec.js';
import { kubeTime } from '../../shared/kube/time.js';

/** Timing of the catalog function (see config.ts for the defaults and their env vars). */
export interface CatalogTiming {
  /** Re-read a source this often even when nothing asks (grpc without registryPoll; configmap). */
  resyncMs: number;
  /** Retry an unreachable or missing source after this long. */
  retryMs: number;
  /** Look again this soon while a registry pod starts. */
  connectingRetryMs: number;
  /** Look again this soon while a polling update pod starts (upstream: 30 s). */
  updatePodRequeueMs: number;
}

/** The catalog function's own bookkeeping per CatalogSource: what its served index was read from. */
export interface SyncRecord {
  /** What was read, e.g. "configmap:<uid>@<resourceVersion>", "grpc:<address>". */
  sourceVersion: string;
  /** Digest of the index built from it. */
  digest: string;
  /** When it was read (RFC 3339). */
  fetchedAt: string;
  /** The build's warnings, summarised for the status message ('' when none). */
  summary: string;
}

/** An index built from a source this round. */
export interface BuiltCatalog {
  sourceVersion: string;
  index: CatalogIndex;
  content: CatalogContent;
  warnings: readonly CatalogWarning[];
  durationMs: number;
}

/** What reading the source gave this round. */
export type SourceRead =
  | { kind: 'none' }
  | { kind: 'built'; built: BuiltCatalog }
  | { kind: 'unreachable'; address: string; message: string }
  | { kind: 'unusable'; message: string };

/** The registry objects of an image-backed source, as listed. */
export interface RegistryObservation {
  serviceAccount: KubeObject | undefined;
  service: KubeObject | undefined;
  /** Pods labelled olm.catalogSource=<name>. */
  pods: readonly KubeObject[];
  /** Pods labelled catalogsource.operators.coreos.com/update=<name>. */
  updatePods: readonly KubeObject[];
  /** Whether the namespace enforces the restricted pod security profile. */
  restrictedByDefault: boolean;
  /** The catalog's NetworkPolicies that exist, by name; undefined when the cluster serves no NetworkPolicy API. */
  networkPolicies?: ReadonlyMap<string, KubeObject>;
}

/** Everything the decision needs. */
export interface CatalogSnapshot {
  cluster: string;
  namespace: string;
  name: string;
  now: Date;
  globalCatalogNamespace: string;
  timing: CatalogTiming;
  /** The CatalogSource as read from the API; undefined when it is gone. */
  object: KubeObject | undefined;
  /** Its parsed form, when it parses. */
  source: CatalogSource | undefined;
  /** Why the spec cannot be served (schema or upstream's validation), if it cannot. */
  invalid: string | undefined;
  kind: SourceKind | undefined;
  /** configmap sources: the ConfigMap (undefined when missing) or why it could not be read. */
  configMap?: { object: KubeObject | undefined; error?: string };
  registry?: RegistryObservation;
  read: SourceRead;
  sync: SyncRecord | undefined;
  record: CatalogIndexRecord | undefined;
}

/** The writes of one decision. */
export interface CatalogWrites {
  /** Kubernetes writes, in order (the status update last). */
  kube: Write[];
  /** An index to store (and count) before the record names it. */
  built?: BuiltCatalog;
  /** New bookkeeping, or null to delete it. */
  sync?: SyncRecord | null;
  /** The index record to publish, or null to delete it. */
  record?: CatalogIndexRecord | null;
}

/** A CatalogSource status as read and written (unknown fields kept). */
export type CatalogStatus = Record<string, unknown> & {
  reason?: string;
  message?: string;
  connectionState?: { address?: string; lastObservedState: string; lastConnect?: string };
  registryService?: Record<string, string>;
  configMapReference?: Record<string, string>;
  latestImageRegistryPoll?: string;
};

/** JSON with sorted keys: equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const maxMessage = 1024;

/** The status message for a catalog built with warnings ('' without). */
export function summarizeWarnings(warnings: readonly CatalogWarning[]): string {
  if (warnings.length === 0) return '';
  const counts = new Map<string, number>();
  for (const w of warnings) counts.set(w.code, (counts.get(w.code) ?? 0) + 1);
  const byCode = [...counts]
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
    .map(([code, n]) => `${code} ×${n}`)
    .join(', ');
  const first = warnings[0]?.message ?? '';
  const text = `catalog loaded with ${warnings.length} warning${warnings.length === 1 ? '' : 's'} (${byCode}); first: ${first}`;
  return text.length > maxMessage ? `${text.slice(0, maxMessage - 1)}…` : text;
}

/** The identity of what a source serves now: a change of it means the content must be read again. */
export function sourceVersionOf(
  kind: SourceKind,
  spec: CatalogSource['spec'],
  observed: { configMap?: KubeObject; servingPod?: KubeObject },
): string {
  switch (kind) {
    case 'configmap':
      return `configmap:${observed.configMap?.metadata.uid ?? ''}@${observed.configMap?.metadata.resourceVersion ?? ''}`;
    case 'grpc-address':
      return `grpc:${spec.address ?? ''}`;
    case 'grpc-image':
      return `image:${spec.image ?? ''}@${observed.servingPod?.metadata.uid ?? ''}`;
  }
}

/** How often a source is read again without being asked (undefined: only when it changes). */
export function rereadIntervalMs(
  kind: SourceKind,
  spec: CatalogSource['spec'],
  timing: CatalogTiming,
): number | undefined {
  if (kind === 'configmap') return undefined;
  return pollSettingOf(spec)?.intervalMs ?? timing.resyncMs;
}

/**
 * Whether the source must be read this round: it changed since the served index was built,
 * nothing is served yet, the last attempt failed, or a poll/resync is due.
 */
export function readNeeded(input: {
  version: string;
  sync: SyncRecord | undefined;
  record: CatalogIndexRecord | undefined;
  observedState: string | undefined;
  now: Date;
  intervalMs: number | undefined;
}): boolean {
  const { sync, record } = input;
  if (sync === undefined || sync.sourceVersion !== input.version) return true;
  if (record === undefined || record.digest !== sync.digest) return true;
  if (input.observedState !== 'READY') return true;
  if (input.intervalMs === undefined) return false;
  return input.now.getTime() - Date.parse(sync.fetchedAt) >= input.intervalMs;
}

/** What the registry objects of an image-backed source need. */
export interface RegistryPlan {
  writes: Write[];
  /** A serving pod that is Ready behind an existing, current Service (then the source can be read). */
  servingPod: KubeObject | undefined;
  /** Set when the registryService status must be (re)written. */
  registryService?: Record<string, string>;
  /** Whether a polling update pod was started (status.latestImageRegistryPoll = now). */
  polled: boolean;
  /** An error upstream reports as RegistryServerError. */
  error?: string;
  /** When to look again for the registry's sake. */
  requeueAfterMs?: number;
}

const podRef = (pod: KubeObject) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  namespace: pod.metadata.namespace,
  name: pod.metadata.name,
});

function deletePod(pod: KubeObject): Write {
  return {
    op: 'delete',
    ref: podRef(pod),
    ...(pod.metadata.uid === undefined ? {} : { preconditions: { uid: pod.metadata.uid } }),
  };
}

/** The registry part of a reconcile of an image-backed source, as upstream's EnsureRegistryServer. */
export function planRegistry(
  source: RegistrySource,
  observed: RegistryObservation,
  status: CatalogStatus,
  now: Date,
  timing: CatalogTiming,
): RegistryPlan {
  const writes: Write[] = [];
  const image = source.spec.image ?? '';
  const desiredAccount = registryServiceAccount(source);
  const account = observed.serviceAccount ?? desiredAccount;
  if (observed.serviceAccount === undefined) writes.push({ op: 'create', object: desiredAccount });
  const pullSecrets = (account['imagePullSecrets'] ?? []) as { name: string }[];
  const desiredPod = registryPod(
    source,
    { name: account.metadata.name ?? source.name, imagePullSecrets: pullSecrets },
    observed.restrictedByDefault,
  );
  const current = observed.pods.filter((p) => podMatches(p, desiredPod, image));
  // Only a missing or outdated pod is replaced: a lost status write never recreates a good pod.
  const podCreated = current.length === 0;
  if (podCreated) {
    for (const pod of observed.pods) writes.push(deletePod(pod));
    writes.push({ op: 'create', object: desiredPod });
  }

  let polled = false;
  let error: string | undefined;
  let requeueAfterMs: number | undefined;
  const poll = pollSettingOf(source.spec);
  if (poll !== undefined && !podCreated) {
    const latest = status.latestImageRegistryPoll;
    const due = latest === undefined || Date.parse(latest) + poll.intervalMs < now.getTime();
    if (due && observed.updatePods.length === 0) {
      writes.push({ op: 'create', object: registryUpdatePod(desiredPod, source.name) });
      polled = true;
      requeueAfterMs = timing.updatePodRequeueMs;
    } else {
      const failed = observed.updatePods.find(podFailed);
      const starting = observed.updatePods.find((p) => !podReady(p));
      if (failed !== undefined) {
        writes.push(deletePod(failed));
        const phase = (failed['status'] as { phase?: string } | undefined)?.phase ?? '';
        error = `couldn't ensure registry server - error ensuring updated catalog source pod: ${failed.metadata.name ?? ''}: update pod ${failed.metadata.name ?? ''} in a ${phase} state: deleted update pod`;
      } else if (starting !== undefined) {
        requeueAfterMs = timing.updatePodRequeueMs;
      } else {
        for (const update of observed.updatePods) {
          const updateId = podImageId(update);
          const changed =
            updateId !== '' &&
            observed.pods.some((p) => podImageId(p) !== '' && podImageId(p) !== updateId);
          if (changed) {
            // Promote: the Service now selects the update pod; the old serving pods go.
            writes.push({
              op: 'patch',
              ref: podRef(update),
              type: 'merge',
              patch: {
                metadata: {
                  labels: { [catalogSourceLabel]: source.name, [catalogSourceUpdateLabel]: '' },
                },
              },
            });
            for (const pod of observed.pods) writes.push(deletePod(pod));
            break;
          }
          writes.push(deletePod(update)); // same image: no update
        }
      }
      if (latest !== undefined && !due) {
        const untilDue = Date.parse(latest) + poll.intervalMs - now.getTime();
        requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, Math.max(1_000, untilDue));
      }
    }
  }

  const policies = observed.networkPolicies;
  for (const policy of policies === undefined ? [] : registryNetworkPolicies(source)) {
    const existing = policies?.get(policy.metadata.name ?? '');
    if (existing === undefined) writes.push({ op: 'create', object: policy });
    else if (canonicalJson(existing['spec']) !== canonicalJson(policy['spec']))
      writes.push({
        op: 'update',
        object: {
          ...existing,
          metadata: {
            ...existing.metadata,
            labels: { ...existing.metadata.labels, ...policy.metadata.labels },
          },
          spec: policy['spec'],
        },
      });
  }

  const desiredService = registryService(source);
  const serviceCurrent =
    observed.service !== undefined &&
    observed.service.metadata.labels?.[serviceSpecHashLabel] ===
      desiredService.metadata.labels?.[serviceSpecHashLabel];
  if (!serviceCurrent) {
    if (observed.service !== undefined) {
      writes.push({
        op: 'delete',
        ref: {
          apiVersion: 'v1',
          kind: 'Service',
          namespace: source.namespace,
          name: observed.service.metadata.name,
        },
        ...(observed.service.metadata.uid === undefined
          ? {}
          : { preconditions: { uid: observed.service.metadata.uid } }),
      });
    }
    writes.push({ op: 'create', object: desiredService });
  }

  const wanted = {
    protocol: 'grpc',
    serviceName: registryServiceName(source.name),
    serviceNamespace: source.namespace,
    port: String(registryPort),
  };
  const known = status.registryService;
  const valid =
    known !== undefined &&
    known['protocol'] === wanted.protocol &&
    known['serviceName'] === wanted.serviceName &&
    known['serviceNamespace'] === wanted.serviceNamespace &&
    known['port'] === wanted.port;
  const servingPod =
    podCreated || !serviceCurrent ? undefined : current.find((p) => podReady(p) && !isDeleting(p));
  return {
    writes,
    servingPod,
    ...(podCreated || !valid ? { registryService: { ...wanted, createdAt: kubeTime(now) } } : {}),
    polled,
    ...(error === undefined ? {} : { error }),
    ...(requeueAfterMs === undefined ? {} : { requeueAfterMs }),
  };
}

const isDeleting = (pod: KubeObject): boolean => pod.metadata['deletionTimestamp'] !== undefined;

/** The source as the registry builders see it. */
export function registrySourceOf(object: KubeObject, source: CatalogSource): RegistrySource {
  return {
    name: object.metadata.name ?? '',
    namespace: object.metadata.namespace ?? '',
    uid: object.metadata.uid ?? '',
    annotations: object.metadata.annotations ?? {},
    spec: source.spec,
  };
}

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
