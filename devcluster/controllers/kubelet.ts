// The kubelet stand-in: makes pods Running and Ready after a delay, or keeps them unready or
// crash-looping while the fail annotation asks for it.
import { systemWrite, type ApiCore } from '../api/core.js';
import { jsonEqual } from '../api/object-json.js';
import { isJsonObject, text, type JsonObject, type JsonValue } from '../../shared/kube/json.js';
import { completionIndexKey, parseIndexes } from './job-indexes.js';
import {
  controllerOf,
  failAnnotation,
  failIndexesAnnotation,
  parseFailMode,
  type FailMode,
  fnv32a,
  metadataOf,
  obj,
  tolerate,
} from './workload-objects.js';

/** Pod status as a kubelet reports it, simulated. */
export class KubeletSimulation {
  /** When each pod (by uid) was first seen, for the readiness delay. */
  private readonly firstSeen = new Map<string, number>();

  constructor(
    private readonly core: ApiCore,
    /** How long a new pod takes to become Ready. */
    private readonly podReadyDelayMs: number,
    /** Looks at a pod again after a delay. */
    private readonly requeue: (key: string, delayMs: number) => void,
  ) {}

  /** Forgets a deleted pod. */
  forget(uid: string): void {
    this.firstSeen.delete(uid);
  }

  /**
   * The fail mode of a pod: its own annotation, else its ReplicaSet's, else its Deployment's
   * (or Job's); none when that object's fail-indexes annotation leaves out the pod's index.
   */
  private failMode(pod: JsonObject): FailMode | undefined {
    let current: JsonObject | undefined = pod;
    for (let depth = 0; current && depth < 3; depth++) {
      const annotations = obj(metadataOf(current)['annotations']);
      const mode = parseFailMode(annotations[failAnnotation]);
      if (mode !== undefined) {
        const only = annotations[failIndexesAnnotation];
        const index = obj(metadataOf(pod)['annotations'])[completionIndexKey];
        if (typeof only === 'string' && !parseIndexes(only, Infinity).has(Number(index ?? -1)))
          return undefined;
        return mode;
      }
      const uid = controllerOf(current);
      const owner = uid === undefined ? undefined : this.core.store.byUid(uid);
      current = owner ? this.core.store.get(owner.key, owner.namespace, owner.name) : undefined;
    }
    return undefined;
  }

  /** Reconciles the pod `namespace/name`. */
  reconcile(key: string): void {
    const [namespace = '', name = ''] = key.split('/');
    const pod = this.core.store.get('pods', namespace, name);
    if (!pod || metadataOf(pod)['deletionTimestamp'] !== undefined) return;
    const uid = text(metadataOf(pod)['uid']);
    const seen = this.firstSeen.get(uid) ?? Date.now();
    this.firstSeen.set(uid, seen);
    const waited = Date.now() - seen;
    const restartPolicy = obj(pod['spec'])['restartPolicy'];
    const runsToCompletion = restartPolicy === 'Never' || restartPolicy === 'OnFailure';
    const asked = this.failMode(pod);
    const ends = asked?.mode === 'fail' || asked?.mode === 'disrupt';
    // "fail" ends a run-to-completion pod Failed; a restarting container crash-loops instead.
    const mode = ends && !runsToCompletion ? 'crashloop' : asked?.mode;
    const previous = obj(pod['status']);
    if (previous['phase'] === 'Succeeded' || previous['phase'] === 'Failed') return;
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
    const waits = mode === undefined || (runsToCompletion && ends);
    if (waits && waited < this.podReadyDelayMs) {
      this.requeue(key, this.podReadyDelayMs - waited);
      if (previous['phase'] === 'Pending' && previous['startTime'] !== undefined) return;
    }
    const started = !waits || waited >= this.podReadyDelayMs;
    if (started && runsToCompletion && (mode === undefined || ends)) {
      const copy = structuredClone(pod);
      const ending = asked ?? { mode: 'succeed' as const, exitCode: 0 };
      copy['status'] = terminatedStatus(containers, ending, startTime, now, uid, name);
      this.writeStatus(namespace, name, copy);
      return;
    }
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
      podIP: podIP(uid, name),
      startTime,
      containerStatuses,
      qosClass: 'BestEffort',
    };
    if (jsonEqual(status, pod['status'] ?? {})) return;
    const copy = structuredClone(pod);
    copy['status'] = status;
    this.writeStatus(namespace, name, copy);
  }

  private writeStatus(namespace: string, name: string, copy: JsonObject): void {
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

function podIP(uid: string, name: string): string {
  return `10.244.${fnv32a(uid) % 250}.${(fnv32a(name) % 250) + 1}`;
}

/**
 * The status of a pod whose containers ran to completion: Succeeded (all exit 0), or Failed with
 * the first container's exit code (a disrupted pod also gets DisruptionTarget, as an eviction).
 */
function terminatedStatus(
  containers: JsonObject[],
  ending: FailMode | { mode: 'succeed'; exitCode: number },
  startTime: JsonValue,
  now: string,
  uid: string,
  name: string,
): JsonObject {
  const failed = ending.mode !== 'succeed';
  const notReady = {
    status: 'False',
    reason: 'PodCompleted',
    lastProbeTime: null,
    lastTransitionTime: now,
  };
  const disruption =
    ending.mode === 'disrupt'
      ? [
          {
            type: 'DisruptionTarget',
            status: 'True',
            reason: 'EvictionByEvictionAPI',
            message: 'Eviction API: evicting',
            lastProbeTime: null,
            lastTransitionTime: now,
          },
        ]
      : [];
  return {
    phase: failed ? 'Failed' : 'Succeeded',
    conditions: [
      ...disruption,
      {
        type: 'Initialized',
        status: 'True',
        lastProbeTime: null,
        lastTransitionTime: now,
        reason: 'PodCompleted',
      },
      { type: 'Ready', ...notReady },
      { type: 'ContainersReady', ...notReady },
      { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: now },
    ],
    hostIP: '10.0.0.1',
    podIP: podIP(uid, name),
    startTime,
    containerStatuses: containers.map((c, i) => {
      const exitCode = i === 0 ? ending.exitCode : 0;
      const reason = exitCode === 0 ? 'Completed' : 'Error';
      return {
        name: c['name'] ?? '',
        image: c['image'] ?? '',
        imageID: '',
        ready: false,
        started: false,
        restartCount: 0,
        state: { terminated: { exitCode, reason, startedAt: startTime, finishedAt: now } },
      };
    }),
    qosClass: 'BestEffort',
  };
}
