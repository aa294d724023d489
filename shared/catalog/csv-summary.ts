// The few facts of a ClusterServiceVersion the index keeps: install modes, owned and required
// APIs, upgrade hints. Read defensively: real CSVs have missing or oddly typed fields.
import type { CatalogApi, CatalogInstallMode } from './model.js';

/** What the index takes from a CSV (or from an olm.csv.metadata property). */
export interface CsvSummary {
  /** spec.installModes, or null when absent. */
  readonly installModes: readonly CatalogInstallMode[] | null;
  /** Owned CRDs and API services, with plurals. */
  readonly ownedApis: readonly CatalogApi[];
  /** Required CRDs and API services. */
  readonly requiredApis: readonly CatalogApi[];
  /** metadata.annotations["olm.skipRange"], or null. */
  readonly skipRange: string | null;
  /** spec.replaces, or null. */
  readonly replaces: string | null;
  /** spec.skips. */
  readonly skips: readonly string[];
  /** spec.displayName, or null. */
  readonly displayName: string | null;
  /** spec.provider.name, or null. */
  readonly provider: string | null;
}

type Json = Record<string, unknown>;

function record(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Json)
    : undefined;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function list(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

function installModesOf(value: unknown): CatalogInstallMode[] | null {
  if (!Array.isArray(value)) return null;
  const modes: CatalogInstallMode[] = [];
  for (const item of value) {
    const m = record(item);
    const type = text(m?.['type']);
    if (m === undefined || type === null) continue;
    modes.push({ type, supported: m['supported'] === true });
  }
  return modes;
}

// CRD descriptions name the CRD "<plural>.<group>": the group is what follows the first dot.
function crdApis(value: unknown): CatalogApi[] {
  const apis: CatalogApi[] = [];
  for (const item of list(value)) {
    const d = record(item);
    const name = text(d?.['name']);
    const version = text(d?.['version']);
    const kind = text(d?.['kind']);
    if (name === null || version === null || kind === null) continue;
    const dot = name.indexOf('.');
    if (dot <= 0) continue;
    apis.push({ group: name.slice(dot + 1), version, kind, plural: name.slice(0, dot) });
  }
  return apis;
}

function apiServiceApis(value: unknown): CatalogApi[] {
  const apis: CatalogApi[] = [];
  for (const item of list(value)) {
    const d = record(item);
    const group = text(d?.['group']);
    const version = text(d?.['version']);
    const kind = text(d?.['kind']);
    if (group === null || version === null || kind === null) continue;
    apis.push({ group, version, kind, plural: text(d?.['name']) });
  }
  return apis;
}

function summarize(
  spec: Json | undefined,
  annotations: Json | undefined,
  crds: Json | undefined,
  apiServices: Json | undefined,
): CsvSummary {
  const skips = list(spec?.['skips']).filter((s): s is string => typeof s === 'string' && s !== '');
  return {
    installModes: installModesOf(spec?.['installModes']),
    ownedApis: [...crdApis(crds?.['owned']), ...apiServiceApis(apiServices?.['owned'])],
    requiredApis: [...crdApis(crds?.['required']), ...apiServiceApis(apiServices?.['required'])],
    skipRange: text(annotations?.['olm.skipRange']),
    replaces: text(spec?.['replaces']),
    skips,
    displayName: text(spec?.['displayName']),
    provider: text(record(spec?.['provider'])?.['name']),
  };
}

/** Summarizes a decoded ClusterServiceVersion object. */
export function summarizeCsv(csv: unknown): CsvSummary {
  const spec = record(record(csv)?.['spec']);
  const annotations = record(record(record(csv)?.['metadata'])?.['annotations']);
  return summarize(
    spec,
    annotations,
    record(spec?.['customresourcedefinitions']),
    record(spec?.['apiservicedefinitions']),
  );
}

/** Summarizes an olm.csv.metadata property value (a CSV's spec fields, flattened). */
export function summarizeCsvMetadata(metadata: unknown): CsvSummary {
  const m = record(metadata);
  return summarize(
    m,
    record(m?.['annotations']),
    record(m?.['crdDescriptions']),
    record(m?.['apiServiceDefinitions']),
  );
}
