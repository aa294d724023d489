// A function host's consumers, one lane per served cluster: the lane of cluster c pulls only
// c's work items (`<queue>-work-<c>`) and c's mirror changes (`<queue>-trigger-<kind>-<c>`), so
// two pools serving disjoint clusters never see each other's messages (NATS 2.9 allows one
// filter subject per consumer, hence a consumer per cluster). A host given no cluster set has
// one lane over every cluster instead (`<queue>-work`), as olmq had before pools.
//
// Lanes open and close while the host runs, as clusters join and leave its pool. Closing a lane
// stops its pulls; reconciles in flight finish, and items it had buffered come back after
// ack_wait (to whichever pool serves the cluster then).
import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import type { Backbone } from '../bus/backbone.js';
import type { SupervisedMessages } from '../bus/supervised-consumer.js';
import {
  consumeChanges,
  consumeWork,
  removeAllClusterConsumers,
  type QueueConsumer,
} from '../bus/work-queue.js';
import type { ClusterMembership } from './cluster-membership.js';
import type { FunctionHostOptions } from './host-options.js';
import type { Trigger, WorkKeyType } from './types.js';

/** One cluster's consumers (or every cluster's: cluster undefined) and their loops. */
export interface Lane {
  readonly cluster: string | undefined;
  /** The work consumer first, then one per trigger. */
  readonly consumers: QueueConsumer[];
  readonly streams: SupervisedMessages[];
  readonly loops: Promise<void>[];
  /** Set when the lane was closed: messages it still hands out go back unhandled. */
  closed: boolean;
}

/** A consume that opens again after ending: its consumer and first messages, and the reopen. */
export interface OpenedConsume {
  consumer: QueueConsumer;
  messages: ConsumerMessages;
}

/** What opening a lane needs of its host. */
export interface LaneHost {
  triggers: readonly Trigger[];
  log: Logger;
  /** Delay before opening a joining cluster's lane again after opening failed. */
  retryMs: number;
  /** Creates (idempotently) the work consumer of `cluster` and starts consuming. */
  openWork(cluster: string | undefined): Promise<OpenedConsume>;
  /** Creates (idempotently) the consumer of `trigger`'s kind in `cluster` and starts consuming. */
  openChanges(trigger: Trigger, cluster: string | undefined): Promise<OpenedConsume>;
  /** Removes the queue's consumers over every cluster (olmq before pools); returns their names. */
  removeAllCluster(): Promise<string[]>;
  /** Keeps a consume alive through NATS failovers (supervised-consumer.ts). */
  supervise(opened: OpenedConsume, reopen: () => Promise<ConsumerMessages>): SupervisedMessages;
  /** Runs a trigger's loop over its messages. */
  runTrigger(trigger: Trigger, messages: SupervisedMessages): Promise<void>;
  /** Runs the work loop over a lane's work messages. */
  runWork(messages: AsyncIterable<JsMsg>, lane: Lane): Promise<void>;
}

/**
 * How a host of queue `key.queue` opens its consumers: per cluster, with the host's inactivity
 * threshold (a cluster no pool serves any more loses them); over every cluster, without.
 */
export function laneConsumers(
  backbone: Backbone,
  { key, triggers }: { key: WorkKeyType<unknown>; triggers: readonly Trigger[] },
  options: Pick<FunctionHostOptions, 'ackWaitMs' | 'concurrency' | 'consumerInactiveMs'>,
): Pick<LaneHost, 'openWork' | 'openChanges' | 'removeAllCluster'> {
  const scope = (cluster: string | undefined) => ({
    cluster,
    wordless: key.words === 0,
    inactiveMs: cluster === undefined ? 0 : options.consumerInactiveMs,
    ackWaitMs: options.ackWaitMs,
  });
  return {
    openWork: (cluster) =>
      consumeWork(backbone, key.queue, { ...scope(cluster), concurrency: options.concurrency }),
    openChanges: (trigger, cluster) =>
      consumeChanges(backbone, key.queue, trigger.kind, { ...scope(cluster), window: 256 }),
    removeAllCluster: () =>
      removeAllClusterConsumers(
        backbone,
        key.queue,
        triggers.map((t) => t.kind),
      ),
  };
}

/** The lanes of one host, keyed by cluster (undefined: the one lane of every cluster). */
export class ClusterLanes {
  private readonly lanes = new Map<string | undefined, Lane>();
  /** Clusters whose lane should be open (a join in progress, or open). */
  private readonly wanted = new Set<string | undefined>();
  private readonly pending = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly host: LaneHost) {}

  /** Every open lane's consumers, for backlog metrics. */
  get consumers(): QueueConsumer[] {
    return [...this.lanes.values()].flatMap((lane) => lane.consumers);
  }

  /**
   * Opens a lane per member of `membership` and follows its joins and leaves, after removing
   * the queue's consumers over every cluster (OLMQ_WORK, a work-queue stream, refuses a
   * per-cluster consumer beside one). Returns the unsubscribe.
   */
  async follow(membership: ClusterMembership): Promise<() => void> {
    const removed = await this.host.removeAllCluster();
    if (removed.length > 0)
      this.host.log.info({ consumers: removed }, 'removed consumers over every cluster (pre-pool)');
    const unsubscribe = membership.onChange((change) => {
      if (change.kind === 'joined') this.join(change.cluster);
      else this.leave(change.cluster);
    });
    for (const cluster of membership.clusters) await this.open(cluster);
    return unsubscribe;
  }

  /** Whether this host pulls `cluster`'s work now. */
  serves(cluster: string): boolean {
    return this.lanes.has(undefined) || this.wanted.has(cluster);
  }

  /**
   * Opens the lane of `cluster`; throws when its consumers cannot be created. False when the
   * cluster left (or the host stopped) meanwhile: the lane was closed again.
   */
  async open(cluster: string | undefined): Promise<boolean> {
    this.wanted.add(cluster);
    const lane = await this.opened(cluster);
    if (!this.wanted.has(cluster) || this.stopped) {
      await this.shut(lane);
      return false;
    }
    this.lanes.set(cluster, lane);
    return true;
  }

  /**
   * Opens the lane of a cluster that joined while the host runs, retrying until it opens or the
   * cluster leaves: a join must not be lost to a NATS hiccup.
   */
  join(cluster: string): void {
    this.wanted.add(cluster);
    const task = (async () => {
      for (;;) {
        if (this.stopped || !this.wanted.has(cluster) || this.lanes.has(cluster)) return;
        try {
          if (await this.open(cluster))
            this.host.log.info({ cluster }, 'serving cluster: its consumers are open');
          return;
        } catch (error) {
          this.host.log.warn({ err: error, cluster }, 'could not open a joining cluster; retrying');
          await new Promise((resolve) => setTimeout(resolve, this.host.retryMs));
        }
      }
    })();
    this.track(task);
  }

  /** Closes the lane of a cluster that left; in-flight reconciles are left to finish. */
  leave(cluster: string): void {
    this.wanted.delete(cluster);
    const lane = this.lanes.get(cluster);
    if (lane === undefined) return;
    this.lanes.delete(cluster);
    this.track(
      this.shut(lane).then(() =>
        this.host.log.info({ cluster }, 'stopped serving cluster: its consumers are closed'),
      ),
    );
  }

  /** Stops pulling on every lane (buffered messages come back after ack_wait). */
  stopPulling(): void {
    this.stopped = true;
    for (const lane of this.lanes.values()) {
      lane.closed = true;
      for (const messages of lane.streams) messages.stop();
    }
  }

  /** Waits for every lane's loops and every join or leave in progress. */
  async ended(): Promise<void> {
    await Promise.allSettled([
      ...this.pending,
      ...[...this.lanes.values()].flatMap((lane) => lane.loops),
    ]);
  }

  private track(task: Promise<void>): void {
    const tracked = task.catch((error: unknown) =>
      this.host.log.warn({ err: error }, 'cluster lane change failed'),
    );
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }

  private async shut(lane: Lane): Promise<void> {
    lane.closed = true;
    for (const messages of lane.streams) messages.stop();
    await Promise.allSettled(lane.loops);
  }

  // Creates the lane's consumers, triggers first (as before pools), and starts its loops.
  private async opened(cluster: string | undefined): Promise<Lane> {
    const lane: Lane = { cluster, consumers: [], streams: [], loops: [], closed: false };
    try {
      for (const trigger of this.host.triggers) {
        const first = await this.host.openChanges(trigger, cluster);
        const messages = this.host.supervise(
          first,
          async () => (await this.host.openChanges(trigger, cluster)).messages,
        );
        lane.consumers.push(first.consumer);
        lane.streams.push(messages);
        lane.loops.push(this.host.runTrigger(trigger, messages));
      }
      const first = await this.host.openWork(cluster);
      const messages = this.host.supervise(
        first,
        async () => (await this.host.openWork(cluster)).messages,
      );
      lane.consumers.unshift(first.consumer);
      lane.streams.push(messages);
      lane.loops.push(this.host.runWork(messages, lane));
    } catch (error) {
      await this.shut(lane);
      throw error;
    }
    return lane;
  }
}
