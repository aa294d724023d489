// Simulated workloads: a deployment controller (Deployment → ReplicaSet per pod template), a
// replica set controller (ReplicaSet → Pods), a job controller (Job → Pods run to completion), a
// CronJob controller (CronJob → Jobs on schedule) and a kubelet stand-in that makes pods Running
// and Ready after a delay, or keeps them unready / crash-looping when asked by annotation. This
// file wires them to the store's changes and the clock; each lives in a module of its own.
import type { Logger } from 'pino';
import type { ApiCore } from '../api/core.js';
import { text, type JsonObject } from '../../shared/kube/json.js';
import type { ChangeEvent } from '../storage/types.js';
import type { Clock } from './clock.js';
import { reconcileCronJob } from './cronjob-controller.js';
import { reconcileDeployment } from './deployment-controller.js';
import { reconcileJob } from './job-controller.js';
import { KubeletSimulation } from './kubelet.js';
import { WorkQueue } from './queue.js';
import { reconcileReplicaSet } from './replicaset-controller.js';
import { controllerOf, metadataOf, podsOf } from './workload-objects.js';

/** Options of the workload simulation. */
export interface WorkloadOptions {
  /** How long a new pod takes to become Ready. */
  podReadyDelayMs: number;
  /** The time Job deadlines and CronJob schedules follow. */
  clock: Clock;
}

/** Deployment, ReplicaSet, Job and kubelet simulation. */
export class WorkloadControllers {
  private readonly deployments: WorkQueue;
  private readonly replicaSets: WorkQueue;
  private readonly pods: WorkQueue;
  private readonly jobs: WorkQueue;
  private readonly cronJobs: WorkQueue;
  private readonly kubelet: KubeletSimulation;

  constructor(
    private readonly core: ApiCore,
    logger: Logger,
    private readonly options: WorkloadOptions,
  ) {
    this.kubelet = new KubeletSimulation(core, options.podReadyDelayMs, (key, delayMs) =>
      this.pods.addAfter(key, delayMs),
    );
    this.deployments = new WorkQueue('deployment', (k) => reconcileDeployment(core, k), logger);
    this.replicaSets = new WorkQueue('replicaset', (k) => reconcileReplicaSet(core, k), logger);
    this.pods = new WorkQueue('kubelet', (k) => this.kubelet.reconcile(k), logger);
    this.jobs = new WorkQueue(
      'job',
      (k) =>
        reconcileJob(core, k, options.clock, (key, delayMs) => this.jobs.addAfter(key, delayMs)),
      logger,
    );
    const clock = options.clock;
    this.cronJobs = new WorkQueue(
      'cronjob',
      (k) =>
        reconcileCronJob(core, k, clock, (key, at) =>
          this.cronJobs.addAfter(key, at - clock.now().getTime()),
        ),
      logger,
    );
  }

  /** Starts following changes; returns the stop function. */
  start(): () => void {
    for (const d of this.core.store.list('deployments.apps')) this.deployments.add(this.keyOf(d));
    for (const rs of this.core.store.list('replicasets.apps')) this.replicaSets.add(this.keyOf(rs));
    for (const pod of this.core.store.list('pods')) this.pods.add(this.keyOf(pod));
    const timed = (): void => {
      for (const job of this.core.store.list('jobs.batch')) this.jobs.add(this.keyOf(job));
      for (const cj of this.core.store.list('cronjobs.batch')) this.cronJobs.add(this.keyOf(cj));
    };
    timed();
    const unsubscribe = this.core.store.subscribe((event) => this.observe(event));
    // A jump of the clock may pass a schedule or a deadline: look at every timed object again.
    const stopClock = this.options.clock.onAdvance(timed);
    return () => {
      unsubscribe();
      stopClock();
      this.cronJobs.stop();
      this.deployments.stop();
      this.replicaSets.stop();
      this.pods.stop();
      this.jobs.stop();
    };
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
              podsOf(this.core, rs).forEach((p) => this.pods.add(this.keyOf(p)));
          }
        }
        break;
      case 'replicasets.apps': {
        if (event.type !== 'DELETED') this.replicaSets.add(key);
        const owner = this.ownerKey(event.object, 'deployments.apps');
        if (owner) this.deployments.add(owner);
        break;
      }
      case 'cronjobs.batch':
        if (event.type !== 'DELETED') this.cronJobs.add(key);
        break;
      case 'jobs.batch': {
        const cronJob = this.ownerKey(event.object, 'cronjobs.batch');
        if (cronJob) this.cronJobs.add(cronJob);
        if (event.type !== 'DELETED') {
          this.jobs.add(key);
          // The fail annotation may live on the Job: look at its pods again.
          podsOf(this.core, event.object).forEach((p) => this.pods.add(this.keyOf(p)));
        }
        break;
      }
      case 'pods': {
        if (event.type === 'DELETED') this.kubelet.forget(text(metadataOf(event.object)['uid']));
        else this.pods.add(key);
        const owner = this.ownerKey(event.object, 'replicasets.apps');
        if (owner) this.replicaSets.add(owner);
        const job = this.ownerKey(event.object, 'jobs.batch');
        if (job) this.jobs.add(job);
        break;
      }
    }
  }
}
