// Which PackageManifests a request sees, as upstream's packageserver answers: a namespace sees
// the packages of the CatalogSources in that namespace plus those of the global catalog
// namespace (each shown in the requested namespace, so clients do not see a namespace
// mismatch); across all namespaces, every package in its catalog's namespace. Pure.
import {
  matchesLabelSelector,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
  type LabelSelector,
} from '../shared/kube/selectors.js';
import type { JsonMap, PackageRecord } from './manifest.js';
import type { CatalogPackages } from './view.js';

/** A request's filters. */
export interface PackageQuery {
  /** The request's namespace; undefined across all namespaces. */
  namespace: string | undefined;
  /** The global catalog namespace (upstream: olm; OpenShift: openshift-marketplace). */
  globalNamespace: string;
  /** Parsed label selector. */
  labels: LabelSelector;
  /** metadata.name from the field selector, or undefined. */
  name: string | undefined;
}

/** A visible package: the record and the manifest as this request sees it. */
export interface VisiblePackage {
  /** Identifies the package across catalogs: "<catalog namespace>/<catalog>/<package>". */
  key: string;
  record: PackageRecord;
  manifest: JsonMap;
}

/** A selector the package server cannot apply; the message is what kubectl shows. */
export class PackageQueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PackageQueryError';
  }
}

/**
 * Parses labelSelector and fieldSelector query parameters. Only metadata.name (= or ==) is a
 * supported field, as upstream.
 */
export function parseQuery(
  params: URLSearchParams,
  namespace: string | undefined,
  globalNamespace: string,
): PackageQuery {
  let labels: LabelSelector;
  let name: string | undefined;
  try {
    labels = parseLabelSelector(params.get('labelSelector') ?? '');
    for (const requirement of parseFieldSelector(params.get('fieldSelector') ?? '')) {
      if (requirement.field !== 'metadata.name' || requirement.operator !== 'Equals')
        throw new PackageQueryError(`field label not supported: ${requirement.field}`);
      name = requirement.value;
    }
  } catch (error) {
    if (error instanceof SelectorError) throw new PackageQueryError(error.message);
    throw error;
  }
  return { namespace, globalNamespace, labels, name };
}

/**
 * The packages a query sees, ordered by name, then the request's own namespace before the
 * global one, then higher catalog priority, then catalog name: a get by name takes the first.
 */
export function visiblePackages(
  catalogs: readonly CatalogPackages[],
  query: PackageQuery,
): VisiblePackage[] {
  const { namespace, globalNamespace } = query;
  const selected =
    namespace === undefined
      ? catalogs
      : catalogs.filter((c) => c.namespace === namespace || c.namespace === globalNamespace);
  const rows: { catalog: CatalogPackages; record: PackageRecord; name: string }[] = [];
  for (const catalog of selected) {
    for (const record of catalog.records) {
      const metadata = record.manifest['metadata'] as JsonMap;
      const name = metadata['name'] as string;
      if (query.name !== undefined && name !== query.name) continue;
      if (!matchesLabelSelector(query.labels, record.labels)) continue;
      rows.push({ catalog, record, name });
    }
  }
  const own = (c: CatalogPackages): number => (c.namespace === namespace ? 0 : 1);
  rows.sort(
    (a, b) =>
      a.name.localeCompare(b.name) ||
      own(a.catalog) - own(b.catalog) ||
      b.catalog.priority - a.catalog.priority ||
      a.catalog.namespace.localeCompare(b.catalog.namespace) ||
      a.catalog.name.localeCompare(b.catalog.name),
  );
  return rows.map(({ catalog, record, name }) => ({
    key: `${catalog.namespace}/${catalog.name}/${name}`,
    record,
    manifest:
      namespace === undefined
        ? record.manifest
        : {
            ...record.manifest,
            metadata: { ...(record.manifest['metadata'] as JsonMap), namespace },
          },
  }));
}
