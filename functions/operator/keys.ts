// The operator function's work keys, one type per definition (per queue).
import { workKeyType } from '../../shared/runtime/work-keys.js';

/** A namespace's adoption: its Subscriptions, InstallPlans, CSVs and what those CSVs own. */
export const adoptionKey = workKeyType('operator-adoption', ['namespace']);

/** One Operator (cluster-scoped, by name): created while it has components; its status. */
export const operatorKey = workKeyType('operator-status', ['name']);
