// The catalog function's work key.
import { workKeyType } from '../../shared/runtime/work-keys.js';

/** One CatalogSource. */
export const catalogSourceKey = workKeyType('catalog', ['namespace', 'name']);
