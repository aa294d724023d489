// The plan function's work key.
import { workKeyType } from '../../shared/runtime/work-keys.js';

/** A namespace's planning: its resolution into InstallPlans. */
export const planKey = workKeyType('plan', ['namespace']);
