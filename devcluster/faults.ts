// Fault injection for deterministic failure tests: forced 409s, expired watches, dropped watches.
import type { ConflictInjector } from './api/types.js';
import { storageKey } from './resources/registry.js';
import type { ObjectStore } from './storage/store.js';
import type { WatchHub } from './storage/watch.js';
import type { FaultHooks, ObjectTarget } from './types.js';

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
