// The copy-csv function's work keys, one type per definition (per queue). Triggers and
// decisions name work only through these.
import { workKeyType } from '../../shared/runtime/work-keys.js';

/** The copies of one namespace: where the fan-out lands, one small item per namespace. */
export const namespaceKey = workKeyType('copy-csv-namespace', ['namespace']);

/** A non-copied CSV that changed: fans out to every namespace its copies may live in. */
export const sourceKey = workKeyType('copy-csv-source', ['namespace', 'name']);

/** The OLMConfig switch of the cluster (one key per cluster: only `cluster` is read). */
export const olmConfigKey = workKeyType('copy-csv-olmconfig', []);
