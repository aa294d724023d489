// The resolve function's work key.
import { workKeyType } from '../../shared/runtime/work-keys.js';

/** A namespace's resolution: all its Subscriptions are resolved together. */
export const resolveKey = workKeyType('resolve', ['namespace']);
