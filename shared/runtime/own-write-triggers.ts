// A function's own writes coming back through the mirror. A change that is exactly a version one
// of this replica's writes left (shared/kube/own-writes.ts) needs no pass of its own when those
// writes are conditional (creates, and updates carrying the version decided on) and a decision
// does all its snapshot allows (`again` for what a write unlocks): the decision that wrote it saw
// the version it replaced, and another writer's change after it comes as a newer version. A
// replica that did not write it, or an object written over since, maps the change as usual.
import type { OwnWrites, VersionedObject } from '../kube/own-writes.js';
import type { Trigger } from './types.js';

/** `trigger`, skipping changes that are versions `ownWrites` recorded. */
export const unlessOwnWrite = (trigger: Trigger, ownWrites: OwnWrites): Trigger => ({
  ...trigger,
  workKeys: (change) =>
    ownWrites.isOwnWrite(change.ref, change.object as VersionedObject | undefined)
      ? []
      : trigger.workKeys(change),
});
