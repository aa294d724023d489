// The contract of a kind's mirror (mirror.ts): what it needs from the watcher, and what it
// gives back.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { Backbone } from '../shared/bus/backbone.js';
import type { KubeClient } from '../shared/kube/client.js';
import type { MirroredKind } from './kinds.js';

/** What the mirror of one cluster needs. */
export interface MirrorContext {
  cluster: string;
  kubeConfig: KubeConfig;
  client: KubeClient;
  backbone: Backbone;
  log: Logger;
  /** Counts published changes by kind and operation (put, delete). */
  published: Counter<'cluster' | 'kind' | 'operation'>;
  /** Counts watches given up as stalled and resumed, and resyncs, by kind. */
  watchEvents?: Counter<'cluster' | 'kind' | 'event'>;
  /** A watch silent this long is stalled (InformerOptions.stallTimeoutMs). */
  stallTimeoutMs?: number | undefined;
  /** Full resync period (InformerOptions.resyncMs); 0 never. */
  resyncMs?: number | undefined;
  /** The Lease epoch of this watcher term, carried by every write. */
  epoch: number;
  /** Whether the term's lease is still current on our clock (LeaderTerm.current). */
  current: () => boolean;
  /** Most mirror publishes of the kind unacknowledged at once (./publish-window.ts). */
  maxInFlight?: number | undefined;
}

/** A running mirror of one kind. */
export interface KindMirror {
  kind: MirroredKind;
  /** Resolves once the first list is mirrored and stale keys are removed. */
  synced: Promise<void>;
  /** Keys whose latest change failed to publish and waits for a retry (0 when all landed). */
  failing(): number;
  /** The last publish error of a key still failing, for readiness and logs. */
  lastError(): string | undefined;
  /**
   * Writes the key of `namespace`/`name` again (its object, or its deletion), over a deposed
   * term's write found at stream sequence `seq`.
   */
  repair(namespace: string, name: string, seq: number): void;
  /** Writes the name index entry of `namespace` again, over a deposed term's write. */
  repairNames(namespace: string): void;
  stop(): void;
}
