// Simulated workloads: a deployment controller (Deployment → ReplicaSet per pod template), a
// replica set controller (ReplicaSet → Pods) and a kubelet stand-in that makes pods Running and
// Ready after a delay, or keeps them unready / crash-looping when asked by annotation.
import type { Logger } from 'pino';
import { systemWrite, type ApiCore } from '../api/core.js';
import { jsonEqual } from '../api/object-json.js';
import { ApiError } from '../api/errors.js';
import { isJsonObject, text, type JsonObject, type JsonValue } from '../../shared/kube/json.js';
import { randomSuffix } from '../resources/names.js';
import type { ChangeEvent } from '../storage/types.js';
import { WorkQueue } from './queue.js';

/**
 * Annotation (on a Deployment, ReplicaSet or Pod) that makes its pods fail: "unready" keeps them
 * Running but not Ready; "crashloop" shows CrashLoopBackOff. Removing it lets them become Ready.
 */
export const failAnnotation = 'devcluster.olmq.io/fail';

/** Label carrying the pod template hash on ReplicaSets and Pods. */
export const podTemplateHashLabel = 'pod-template-hash';

function metadataOf(object: JsonObject): JsonObject {
  return object['metadata'] as JsonObject;
}

function obj(value: JsonValue | undefined): JsonObject {
  return isJsonObject(value) ? value : {};
}

function fnv32a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

const safeAlphabet = 'bcdfghjklmnpqrstvwxz2456789';

/** The pod-template-hash of a template (fnv32a, encoded with kube's safe alphabet). */
export function podTemplateHash(template: JsonValue): string {
  return text(fnv32a(JSON.stringify(template)))
    .split('')
    .map((d) => safeAlphabet[Number(d)] ?? 'b')
    .join('');
}

function controllerOf(object: JsonObject): string | undefined {
  const refs = metadataOf(object)['ownerReferences'];
  if (!Array.isArray(refs)) return undefined;
  for (const ref of refs)
    if (isJsonObject(ref) && ref['controller'] === true) return text(ref['uid']);
  return undefined;
}

function ownerRef(owner: JsonObject, kind: string, apiVersion: string): JsonObject {
  const m = metadataOf(owner);
  return {
    apiVersion,
    kind,
    name: m['name'] ?? '',
    uid: m['uid'] ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

function isReady(pod: JsonObject): boolean {
  const conditions = obj(pod['status'])['conditions'];
  return (
    Array.isArray(conditions) &&
    conditions.some((c) => isJsonObject(c) && c['type'] === 'Ready' && c['status'] === 'True')
  );
}

function tolerate(action: () => unknown): void {
  try {
    action();
  } catch (error) {
    if (
      error instanceof ApiError &&
      (error.reason === 'NotFound' ||
        error.reason === 'Conflict' ||
        error.reason === 'AlreadyExists' ||
        error.reason === 'Forbidden')
    )
      return;
    throw error;
  }
}

function condition(
  type: string,
  status: boolean,
  reason: string,
  message: string,
  now: string,
  previous: JsonValue | undefined,
): JsonObject {
  const list = Array.isArray(previous) ? previous.filter(isJsonObject) : [];
  const before = list.find((c) => c['type'] === type);
  const value = status ? 'True' : 'False';
  const same = before !== undefined && before['status'] === value && before['reason'] === reason;
  return {
    type,
    status: value,
    lastUpdateTime: same ? (before['lastUpdateTime'] ?? now) : now,
    lastTransitionTime:
      before !== undefined && before['status'] === value
        ? (before['lastTransitionTime'] ?? now)
        : now,
    reason,
    message,
  };
}

/** Options of the workload simulation. */
export interface WorkloadOptions {
  /** How long a new pod takes to become Ready. */
  podReadyDelayMs: number;
}

/** Deployment, ReplicaSet and kubelet simulation. */
export class WorkloadControllers {
  private readonly deployments: WorkQueue;
  private readonly replicaSets: WorkQueue;
  private readonly pods: WorkQueue;
  /** When each pod (by uid) was first seen, for the readiness delay. */
  private readonly firstSeen = new Map<string, number>();

  constructor(
    private readonly core: ApiCore,
    logger: Logger,
    private readonly options: WorkloadOptions,
  ) {
    this.deployments = new WorkQueue('deployment', (k) => this.reconcileDeployment(k), logger);
    this.replicaSets = new WorkQueue('replicaset', (k) => this.reconcileReplicaSet(k), logger);
    this.pods = new WorkQueue('kubelet', (k) => this.reconcilePod(k), logger);
  }

  /** Starts following changes; returns the stop function. */
  start(): () => void {
    for (const d of this.core.store.list('deployments.apps')) this.deployments.add(this.keyOf(d));
    for (const rs of this.core.store.list('replicasets.apps')) this.replicaSets.add(this.keyOf(rs));
    for (const pod of this.core.store.list('pods')) this.pods.add(this.keyOf(pod));
    const unsubscribe = this.core.store.subscribe((event) => this.observe(event));
    return () => {
      unsubscribe();
      this.deployments.stop();
      this.replicaSets.stop();
      this.pods.stop();
    };
  }

  /** Records a Normal event about `object`, as kube's controllers do (shown by kubectl describe). */
  private event(object: JsonObject, component: string, reason: string, message: string): void {
    const m = metadataOf(object);
    const namespace = text(m['namespace']);
    const now = this.core.timestamp();
    const body: JsonObject = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${text(m['name'])}.${randomSuffix(10)}`, namespace },
      involvedObject: {
        apiVersion: object['apiVersion'] ?? '',
        kind: object['kind'] ?? '',
        namespace,
        name: m['name'] ?? '',
        uid: m['uid'] ?? '',
        resourceVersion: m['resourceVersion'] ?? '',
      },
      reason,
      message,
      type: 'Normal',
      source: { component },
      reportingComponent: component,
      reportingInstance: '',
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    tolerate(() =>
      this.core.create(this.core.typeOf('', 'events'), namespace, body, systemWrite(component)),
    );
  }

  private keyOf(object: JsonObject): string {
    const m = metadataOf(object);
    return `${text(m['namespace'] ?? '')}/${text(m['name'])}`;
  }

  private ownerKey(object: JsonObject, ownerStorage: string): string | undefined {
    const uid = controllerOf(object);
    if (uid === undefined) return undefined;
    const owner = this.core.store.byUid(uid);
    return owner && owner.key === ownerStorage ? `${owner.namespace}/${owner.name}` : undefined;
  }

  private observe(event: ChangeEvent): void {
    const key = `${event.namespace}/${event.name}`;
    switch (event.key) {
      case 'deployments.apps':
        if (event.type !== 'DELETED') {
          this.deployments.add(key);
          // The fail annotation lives on the Deployment: re-evaluate its pods.
          const uid = text(metadataOf(event.object)['uid']);
          for (const rs of this.core.store.list('replicasets.apps', event.namespace)) {
            if (controllerOf(rs) === uid)
              this.podsOf(rs).forEach((p) => this.pods.add(this.keyOf(p)));
          }
        }
        break;
      case 'replicasets.apps': {
        if (event.type !== 'DELETED') this.replicaSets.add(key);
        const owner = this.ownerKey(event.object, 'deployments.apps');
        if (owner) this.deployments.add(owner);
        break;
      }
      case 'pods': {
        if (event.type === 'DELETED') this.firstSeen.delete(text(metadataOf(event.object)['uid']));
        else this.pods.add(key);
        const owner = this.ownerKey(event.object, 'replicasets.apps');
        if (owner) this.replicaSets.add(owner);
        break;
      }
    }
  }

  private podsOf(rs: JsonObject): JsonObject[] {
    const uid = text(metadataOf(rs)['uid']);
    return this.core.store
      .list('pods', text(metadataOf(rs)['namespace']))
      .filter((p) => controllerOf(p) === uid);
  }

  private reconcileDeployment(key: string): void {
    const [namespace = '', name = ''] = key.split('/');
    const deployment = this.core.store.get('deployments.apps', namespace, name);
    if (!deployment || metadataOf(deployment)['deletionTimestamp'] !== undefined) return;
    const rsType = this.core.typeOf('apps', 'replicasets');
    const spec = obj(deployment['spec']);
    const desired = typeof spec['replicas'] === 'number' ? spec['replicas'] : 1;
    const template = obj(spec['template']);
    const hash = podTemplateHash(template);
    const uid = text(metadataOf(deployment)['uid']);
    const owned = this.core.store
      .list('replicasets.apps', namespace)
      .filter((rs) => controllerOf(rs) === uid);
    const newName = `${name}-${hash}`;
    let current = owned.find((rs) => metadataOf(rs)['name'] === newName);
    const revisions = owned.map((rs) =>
      Number(obj(metadataOf(rs)['annotations'])['deployment.kubernetes.io/revision'] ?? 0),
    );
    if (!current) {
      const templateMeta = obj(template['metadata']);
      const labels = { ...obj(templateMeta['labels']), [podTemplateHashLabel]: hash };
      const selector = obj(spec['selector']);
      const body: JsonObject = {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: {
          name: newName,
          namespace,
          labels,
          annotations: {
            'deployment.kubernetes.io/desired-replicas': text(desired),
            'deployment.kubernetes.io/max-replicas': text(desired + 1),
            'deployment.kubernetes.io/revision': text(Math.max(0, ...revisions) + 1),
          },
          ownerReferences: [ownerRef(deployment, 'Deployment', 'apps/v1')],
        },
        spec: {
          replicas: desired,
          selector: {
            ...selector,
            matchLabels: { ...obj(selector['matchLabels']), [podTemplateHashLabel]: hash },
          },
          template: { ...template, metadata: { ...templateMeta, labels } },
        },
      };
      tolerate(() =>
        this.core.create(rsType, namespace, body, systemWrite('deployment-controller')),
      );
      current = this.core.store.get('replicasets.apps', namespace, newName);
      if (current)
        this.event(
          deployment,
          'deployment-controller',
          'ScalingReplicaSet',
          `Scaled up replica set ${newName} to ${desired}`,
        );
    } else if (obj(current['spec'])['replicas'] !== desired) {
      const copy = structuredClone(current);
      obj(copy['spec'])['replicas'] = desired;
      tolerate(() =>
        this.core.update(rsType, namespace, newName, copy, systemWrite('deployment-controller')),
      );
    }
    // Old ReplicaSets are scaled down at once: the simulation rolls over instantly.
    for (const rs of owned) {
      if (metadataOf(rs)['name'] === newName || obj(rs['spec'])['replicas'] === 0) continue;
      const copy = structuredClone(rs);
      obj(copy['spec'])['replicas'] = 0;
      tolerate(() =>
        this.core.update(
          rsType,
          namespace,
          text(metadataOf(rs)['name']),
          copy,
          systemWrite('deployment-controller'),
        ),
      );
      this.event(
        deployment,
        'deployment-controller',
        'ScalingReplicaSet',
        `Scaled down replica set ${text(metadataOf(rs)['name'])} to 0`,
      );
    }
    const all = this.core.store
      .list('replicasets.apps', namespace)
      .filter((rs) => controllerOf(rs) === uid);
    const sum = (field: string): number =>
      all.reduce((n, rs) => n + Number(obj(rs['status'])[field] ?? 0), 0);
    const newStatus = current ? obj(current['status']) : {};
    const replicas = sum('replicas');
    const ready = sum('readyReplicas');
    const available = sum('availableReplicas');
    const updated = Number(newStatus['replicas'] ?? 0);
    const now = this.core.timestamp();
    const previous = obj(deployment['status'])['conditions'];
    const oldActive = all.some(
      (rs) => metadataOf(rs)['name'] !== newName && Number(obj(rs['status'])['replicas'] ?? 0) > 0,
    );
    const complete = updated === desired && available >= desired && !oldActive;
    const status: JsonObject = {
      observedGeneration: metadataOf(deployment)['generation'] ?? 1,
      replicas,
      updatedReplicas: updated,
      readyReplicas: ready,
      availableReplicas: available,
      conditions: [
        available >= desired
          ? condition(
              'Available',
              true,
              'MinimumReplicasAvailable',
              'Deployment has minimum availability.',
              now,
              previous,
            )
          : condition(
              'Available',
              false,
              'MinimumReplicasUnavailable',
              'Deployment does not have minimum availability.',
              now,
              previous,
            ),
        complete
          ? condition(
              'Progressing',
              true,
              'NewReplicaSetAvailable',
              `ReplicaSet "${newName}" has successfully progressed.`,
              now,
              previous,
            )
          : condition(
              'Progressing',
              true,
              'ReplicaSetUpdated',
              `ReplicaSet "${newName}" is progressing.`,
              now,
              previous,
            ),
      ],
    };
    if (replicas - available > 0) status['unavailableReplicas'] = replicas - available;
    if (ready === 0) delete status['readyReplicas'];
    if (available === 0) delete status['availableReplicas'];
    if (jsonEqual(status, deployment['status'] ?? {})) return;
    const copy = structuredClone(deployment);
    copy['status'] = status;
    tolerate(() =>
      this.core.update(
        this.core.typeOf('apps', 'deployments'),
        namespace,
        name,
        copy,
        systemWrite('deployment-controller'),
        'status',
      ),
    );
  }

  private reconcileReplicaSet(key: string): void {
    const [namespace = '', name = ''] = key.split('/');
    const rs = this.core.store.get('replicasets.apps', namespace, name);
    if (!rs || metadataOf(rs)['deletionTimestamp'] !== undefined) return;
    const podType = this.core.typeOf('', 'pods');
    const spec = obj(rs['spec']);
    const desired = typeof spec['replicas'] === 'number' ? spec['replicas'] : 1;
    const template = obj(spec['template']);
    let pods = this.podsOf(rs).filter((p) => metadataOf(p)['deletionTimestamp'] === undefined);
    for (let i = pods.length; i < desired; i++) {
      const templateMeta = obj(template['metadata']);
      const body: JsonObject = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          ...templateMeta,
          name: `${name}-${randomSuffix()}`,
          namespace,
          ownerReferences: [ownerRef(rs, 'ReplicaSet', 'apps/v1')],
        },
        spec: structuredClone(obj(template['spec'])),
      };
      tolerate(() =>
        this.core.create(podType, namespace, body, systemWrite('replicaset-controller')),
      );
      this.event(
        rs,
        'replicaset-controller',
        'SuccessfulCreate',
        `Created pod: ${text(obj(body['metadata'])['name'])}`,
      );
    }
    for (const extra of pods.slice(desired)) {
      tolerate(() =>
        this.core.delete(podType, namespace, text(metadataOf(extra)['name']), { dryRun: false }),
      );
      this.event(
        rs,
        'replicaset-controller',
        'SuccessfulDelete',
        `Deleted pod: ${text(metadataOf(extra)['name'])}`,
      );
    }
    pods = this.podsOf(rs).filter((p) => metadataOf(p)['deletionTimestamp'] === undefined);
    const ready = pods.filter(isReady).length;
    const status: JsonObject = {
      replicas: pods.length,
      fullyLabeledReplicas: pods.length,
      readyReplicas: ready,
      availableReplicas: ready,
      observedGeneration: metadataOf(rs)['generation'] ?? 1,
    };
    if (ready === 0) {
      delete status['readyReplicas'];
      delete status['availableReplicas'];
    }
    if (pods.length === 0) delete status['fullyLabeledReplicas'];
    if (jsonEqual(status, rs['status'] ?? {})) return;
    const copy = structuredClone(rs);
    copy['status'] = status;
    tolerate(() =>
      this.core.update(
        this.core.typeOf('apps', 'replicasets'),
        namespace,
        name,
        copy,
        systemWrite('replicaset-controller'),
        'status',
      ),
    );
  }

  /** The fail mode of a pod: its own annotation, else its ReplicaSet's, else its Deployment's. */
  private failMode(pod: JsonObject): string | undefined {
    let current: JsonObject | undefined = pod;
    for (let depth = 0; current && depth < 3; depth++) {
      const mode = obj(metadataOf(current)['annotations'])[failAnnotation];
      if (typeof mode === 'string' && mode !== '') return mode;
      const uid = controllerOf(current);
      const owner = uid === undefined ? undefined : this.core.store.byUid(uid);
      current = owner ? this.core.store.get(owner.key, owner.namespace, owner.name) : undefined;
    }
    return undefined;
  }

  private reconcilePod(key: string): void {
    const [namespace = '', name = ''] = key.split('/');
    const pod = this.core.store.get('pods', namespace, name);
    if (!pod || metadataOf(pod)['deletionTimestamp'] !== undefined) return;
    const uid = text(metadataOf(pod)['uid']);
    const seen = this.firstSeen.get(uid) ?? Date.now();
    this.firstSeen.set(uid, seen);
    const waited = Date.now() - seen;
    const mode = this.failMode(pod);
    const previous = obj(pod['status']);
    const now = this.core.timestamp();
    const startTime = typeof previous['startTime'] === 'string' ? previous['startTime'] : now;
    const containers = (
      Array.isArray(obj(pod['spec'])['containers'])
        ? (obj(pod['spec'])['containers'] as JsonValue[])
        : []
    ).filter(isJsonObject);
    const previousStatuses = Array.isArray(previous['containerStatuses'])
      ? previous['containerStatuses'].filter(isJsonObject)
      : [];
    if (mode === undefined && waited < this.options.podReadyDelayMs) {
      this.pods.addAfter(key, this.options.podReadyDelayMs - waited);
      if (previous['phase'] === 'Pending' && previous['startTime'] !== undefined) return;
    }
    const started = mode !== undefined || waited >= this.options.podReadyDelayMs;
    const ready = started && mode === undefined;
    const containerStatuses = containers.map((c) => {
      const before = previousStatuses.find((s) => s['name'] === c['name']);
      const restarts = Number(before?.['restartCount'] ?? 0);
      const state: JsonObject = !started
        ? { waiting: { reason: 'ContainerCreating' } }
        : mode === 'crashloop'
          ? {
              waiting: {
                reason: 'CrashLoopBackOff',
                message: `back-off restarting failed container ${text(c['name'])}`,
              },
            }
          : { running: { startedAt: obj(obj(before?.['state'])['running'])['startedAt'] ?? now } };
      return {
        name: c['name'] ?? '',
        image: c['image'] ?? '',
        imageID: '',
        ready,
        started: started && mode !== 'crashloop',
        restartCount: mode === 'crashloop' ? Math.max(1, restarts) : restarts,
        state,
      } satisfies JsonObject;
    });
    const conditions = previous['conditions'];
    const podConditions = [
      { type: 'Initialized', status: 'True' },
      {
        type: 'Ready',
        status: ready ? 'True' : 'False',
        ...(ready ? {} : { reason: 'ContainersNotReady' }),
      },
      {
        type: 'ContainersReady',
        status: ready ? 'True' : 'False',
        ...(ready ? {} : { reason: 'ContainersNotReady' }),
      },
      { type: 'PodScheduled', status: 'True' },
    ].map((c) => {
      const before = Array.isArray(conditions)
        ? conditions.filter(isJsonObject).find((p) => p['type'] === c.type)
        : undefined;
      return {
        ...c,
        lastProbeTime: null,
        lastTransitionTime:
          before && before['status'] === c.status ? (before['lastTransitionTime'] ?? now) : now,
      } satisfies JsonObject;
    });
    const status: JsonObject = {
      phase: started ? 'Running' : 'Pending',
      conditions: podConditions,
      hostIP: '10.0.0.1',
      podIP: `10.244.${fnv32a(uid) % 250}.${(fnv32a(name) % 250) + 1}`,
      startTime,
      containerStatuses,
      qosClass: 'BestEffort',
    };
    if (jsonEqual(status, pod['status'] ?? {})) return;
    const copy = structuredClone(pod);
    copy['status'] = status;
    tolerate(() =>
      this.core.update(
        this.core.typeOf('', 'pods'),
        namespace,
        name,
        copy,
        systemWrite('kubelet'),
        'status',
      ),
    );
  }
}
