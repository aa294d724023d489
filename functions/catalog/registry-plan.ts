// The registry objects of an image-backed CatalogSource as upstream's EnsureRegistryServer
// keeps them: ServiceAccount, serving pod, polling update pods, NetworkPolicies and Service,
// each written only when missing or outdated.
import type { CatalogSource } from '../../shared/api/catalogsource.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import { kubeTime } from '../../shared/kube/time.js';
import { canonicalJson } from '../../shared/kube/json.js';
import {
  catalogSourceLabel,
  catalogSourceUpdateLabel,
  podDead,
  podFailed,
  podImageId,
  podMatches,
  podReady,
  registryNetworkPolicies,
  registryPod,
  registryPort,
  registryService,
  registryServiceAccount,
  registryServiceName,
  registryUpdatePod,
  serviceSpecHashLabel,
  type RegistrySource,
} from './registry-pod.js';
import { pollSettingOf } from './spec.js';
import type { CatalogStatus, CatalogTiming, RegistryObservation } from './types.js';

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
  // A dead pod (evicted, say) never serves again: it goes and counts for nothing, so a new one
  // replaces it (upstream v0.26.0 keeps it and the catalog stays unreachable).
  const live = observed.pods.filter((p) => !podDead(p));
  for (const pod of observed.pods)
    if (podDead(pod) && !isDeleting(pod)) writes.push(deletePod(pod));
  const current = live.filter((p) => podMatches(p, desiredPod, image));
  // Only a missing, dead or outdated pod is replaced: a lost status write never recreates a
  // good pod.
  const podCreated = current.length === 0;
  if (podCreated) {
    for (const pod of live) writes.push(deletePod(pod));
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
            updateId !== '' && live.some((p) => podImageId(p) !== '' && podImageId(p) !== updateId);
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
            for (const pod of live) writes.push(deletePod(pod));
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
