// The visible catalogs in upstream's preference order, and catalog keys compared and printed.
import type { CatalogSourceKey, ResolverCatalog } from './model.js';

/** "name/namespace" of a catalog. */
export function catalogKeyText(k: CatalogSourceKey): string {
  return `${k.name}/${k.namespace}`;
}

/** Whether two keys name the same catalog. */
export function sameCatalog(a: CatalogSourceKey, b: CatalogSourceKey): boolean {
  return a.name === b.name && a.namespace === b.namespace;
}

/** Higher priority first, then `namespace`'s own catalogs before global ones, then by name. */
export function catalogPreferenceOrder(
  catalogs: readonly ResolverCatalog[],
  namespace: string,
): ResolverCatalog[] {
  return [...catalogs].sort((a, b) => {
    if (a.priority !== b.priority) return b.priority - a.priority;
    if (a.namespace !== b.namespace) {
      if (a.namespace === namespace) return -1;
      if (b.namespace === namespace) return 1;
    }
    return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
}
