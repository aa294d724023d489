// Fault injection for deterministic failure tests: forced 409s, expired watches, dropped watches.
import type { ConflictInjector } from './core.js';
import { storageKey } from './resources.js';
import type { ObjectStore } from './store.js';
import type { WatchHub } from './watch.js';

/** Which object a forced conflict applies to. */
export interface ObjectTarget {
  /** API group, "" for core. */
  group: string;
  /** Plural resource, e.g. "configmaps". */
  resource: string;
  /** "" for cluster-scoped objects. */
  namespace: string;
  name: string;
}

/** Hooks tests use to make the devcluster fail on purpose. */
export interface FaultHooks {
  /** The next `count` writes (update, patch, delete) to the object answer 409 Conflict. */
  conflictNextWrites(target: ObjectTarget, count: number): void;
  /** Forgets the event history: the next watch or list continuation from an older version gets 410 Expired. */
  expireWatches(): void;
  /** Ends every open watch connection now. */
  dropWatches(): void;
}

/** The fault hooks over a store and watch hub, also acting as the core's conflict injector. */
export class Faults implements FaultHooks, ConflictInjector {
  private readonly conflicts = new Map<string, number>();

  constructor(
    private readonly store: ObjectStore,
    private readonly hub: WatchHub,
  ) {}

  conflictNextWrites(target: ObjectTarget, count: number): void {
    this.conflicts.set(
      `${storageKey(target.group, target.resource)}|${target.namespace}|${target.name}`,
      count,
    );
  }

  expireWatches(): void {
    this.store.expireHistory();
  }

  dropWatches(): void {
    this.hub.closeAll();
  }

  takeConflict(key: string, namespace: string, name: string): boolean {
    const k = `${key}|${namespace}|${name}`;
    const left = this.conflicts.get(k) ?? 0;
    if (left <= 0) return false;
    if (left === 1) this.conflicts.delete(k);
    else this.conflicts.set(k, left - 1);
    return true;
  }
}
