// Reads a ConfigMap catalog. Two layouts are recognised:
// - upstream's ConfigMap format (sourceType configmap/internal, read by operator-registry's
//   configmap-server): YAML lists under the keys customResourceDefinitions,
//   clusterServiceVersions and packages. It is converted to File-Based Catalog objects:
//   olm.package per package, olm.channel per channel with entries along the CSVs' replaces
//   chain from currentCSV, olm.bundle per CSV with olm.bundle.object manifests (the CSV and
//   the CRDs it owns). The catalog model then indexes it like any FBC.
// - File-Based Catalog text: when none of the three keys is present, every data key is FBC
//   (JSON or YAML, syntax from the key's extension or detected from the content).
// Pure: ConfigMap data in, catalog objects and conversion warnings out.
import { parse as parseYaml } from 'yaml';
import {
  CatalogWarningCode as W,
  parseCatalogText,
  type CatalogObject,
  type CatalogWarning,
} from '../../shared/catalog/index.js';

/** The keys of upstream's ConfigMap catalog format. */
export const configMapCatalogKeys = [
  'customResourceDefinitions',
  'clusterServiceVersions',
  'packages',
] as const;

/** A ConfigMap that cannot be used as a catalog at all; says what and why. */
export class ConfigMapCatalogError extends Error {
  /** The ConfigMap must be edited; reading it again cannot help. */
  readonly retryable = false;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConfigMapCatalogError';
  }
}

/** What a ConfigMap holds, as catalog objects. */
export interface ConfigMapCatalog {
  /** Which layout was recognised. */
  layout: 'configmap' | 'fbc';
  objects: CatalogObject[];
  /** Irregularities met while converting the ConfigMap format (FBC: none; the build reports). */
  warnings: CatalogWarning[];
}

/** Reads the catalog in a ConfigMap's data; throws ConfigMapCatalogError when it is unusable. */
export function readConfigMapCatalog(
  name: string,
  data: Readonly<Record<string, string>> | undefined,
): ConfigMapCatalog {
  const keys = Object.keys(data ?? {}).sort();
  if (data === undefined || keys.length === 0) {
    throw new ConfigMapCatalogError(
      `configmap ${name} has no data: expected the keys ${configMapCatalogKeys.join(', ')}, or File-Based Catalog files`,
    );
  }
  if (keys.some((k) => (configMapCatalogKeys as readonly string[]).includes(k)))
    return convertConfigMapFormat(name, data);
  const objects: CatalogObject[] = [];
  for (const key of keys) {
    const format = key.endsWith('.json')
      ? 'json'
      : key.endsWith('.yaml') || key.endsWith('.yml')
        ? 'yaml'
        : 'auto';
    try {
      objects.push(...parseCatalogText(data[key] ?? '', `configmap/${name}/${key}`, format));
    } catch (error) {
      throw new ConfigMapCatalogError(
        `configmap ${name} is not a usable catalog: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
  return { layout: 'fbc', objects, warnings: [] };
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;
const objectAt = (value: Json, key: string): Json => {
  const inner = value[key];
  return isObject(inner) ? inner : {};
};
const listAt = (value: Json, key: string): unknown[] => {
  const inner = value[key];
  return Array.isArray(inner) ? inner : [];
};

function yamlList(name: string, data: Readonly<Record<string, string>>, key: string): unknown[] {
  const raw = data[key];
  if (raw === undefined || raw.trim() === '') return [];
  let parsed: unknown;
  try {
    parsed = parseYaml(raw, { maxAliasCount: 100 });
  } catch (error) {
    throw new ConfigMapCatalogError(
      `configmap ${name} is not a usable catalog: key ${key} is not valid YAML: ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (parsed === null || parsed === undefined) return [];
  if (!Array.isArray(parsed))
    throw new ConfigMapCatalogError(
      `configmap ${name} is not a usable catalog: key ${key} must be a YAML list`,
    );
  return parsed;
}

interface ApiRef {
  group: string;
  version: string;
  kind: string;
}

// The group of an owned/required CRD entry: the CRD object's spec.group when we have it, else
// what follows the first dot of its name (CRD names are <plural>.<group>).
function crdApi(entry: Json, crds: ReadonlyMap<string, Json>): ApiRef | undefined {
  const name = text(entry['name']);
  const version = text(entry['version']);
  const kind = text(entry['kind']);
  if (name === undefined || version === undefined || kind === undefined) return undefined;
  const crd = crds.get(name);
  const group = text(objectAt(crd ?? {}, 'spec')['group']) ?? name.slice(name.indexOf('.') + 1);
  return { group, version, kind };
}

function apiServiceApi(entry: Json): ApiRef | undefined {
  const group = text(entry['group']);
  const version = text(entry['version']);
  const kind = text(entry['kind']);
  if (group === undefined || version === undefined || kind === undefined) return undefined;
  return { group, version, kind };
}

const bundleObject = (manifest: unknown) => ({
  type: 'olm.bundle.object',
  value: { data: Buffer.from(JSON.stringify(manifest)).toString('base64') },
});

function convertConfigMapFormat(
  name: string,
  data: Readonly<Record<string, string>>,
): ConfigMapCatalog {
  const origin = (key: string): string => `configmap/${name}/${key}`;
  const warnings: CatalogWarning[] = [];
  if (data['packages'] === undefined)
    throw new ConfigMapCatalogError(
      `configmap ${name} is not a usable catalog: it has ${configMapCatalogKeys
        .filter((k) => data[k] !== undefined)
        .join(', ')} but no packages key, so no package can be served`,
    );

  const crds = new Map<string, Json>();
  for (const [i, crd] of yamlList(name, data, 'customResourceDefinitions').entries()) {
    const crdName = isObject(crd) ? text(objectAt(crd, 'metadata')['name']) : undefined;
    if (crdName === undefined || !isObject(crd)) {
      warnings.push({
        code: W.ObjectInvalid,
        origin: origin('customResourceDefinitions'),
        message: `customResourceDefinitions item ${i} has no metadata.name; ignored`,
      });
      continue;
    }
    if (!crds.has(crdName)) crds.set(crdName, crd);
  }
  const csvs = new Map<string, Json>();
  for (const [i, csv] of yamlList(name, data, 'clusterServiceVersions').entries()) {
    const csvName = isObject(csv) ? text(objectAt(csv, 'metadata')['name']) : undefined;
    if (csvName === undefined || !isObject(csv)) {
      warnings.push({
        code: W.ObjectInvalid,
        origin: origin('clusterServiceVersions'),
        message: `clusterServiceVersions item ${i} has no metadata.name; ignored`,
      });
      continue;
    }
    if (csvs.has(csvName)) {
      warnings.push({
        code: W.BundleDuplicate,
        bundle: csvName,
        origin: origin('clusterServiceVersions'),
        message: `ClusterServiceVersion "${csvName}" is listed twice; the later one is dropped`,
      });
      continue;
    }
    csvs.set(csvName, csv);
  }

  const lines: Json[] = [];
  const used = new Set<string>();
  for (const [i, pkg] of yamlList(name, data, 'packages').entries()) {
    const packageName = isObject(pkg) ? text(pkg['packageName']) : undefined;
    if (packageName === undefined || !isObject(pkg)) {
      warnings.push({
        code: W.ObjectInvalid,
        origin: origin('packages'),
        message: `packages item ${i} has no packageName; ignored`,
      });
      continue;
    }
    const defaultChannel = text(pkg['defaultChannel']);
    lines.push({
      schema: 'olm.package',
      name: packageName,
      ...(defaultChannel === undefined ? {} : { defaultChannel }),
    });
    const members = new Set<string>();
    for (const channel of listAt(pkg, 'channels')) {
      const channelName = isObject(channel) ? text(channel['name']) : undefined;
      const head = isObject(channel) ? text(channel['currentCSV']) : undefined;
      if (channelName === undefined || head === undefined) {
        warnings.push({
          code: W.ObjectInvalid,
          package: packageName,
          origin: origin('packages'),
          message: `a channel of package "${packageName}" lacks name or currentCSV; ignored`,
        });
        continue;
      }
      // Walk the replaces chain from the head; a CSV missing from the ConfigMap ends it (the
      // last entry keeps its dangling replaces, which the index reports).
      const entries: Json[] = [];
      const seen = new Set<string>();
      for (let current: string | undefined = head; current !== undefined;) {
        if (seen.has(current)) break;
        seen.add(current);
        const csv = csvs.get(current);
        if (csv === undefined) {
          if (current === head)
            warnings.push({
              code: W.ChannelEntryUnknownBundle,
              package: packageName,
              channel: channelName,
              bundle: head,
              origin: origin('packages'),
              message: `currentCSV "${head}" of channel "${channelName}" is not in clusterServiceVersions; the channel is empty`,
            });
          break;
        }
        const spec = objectAt(csv, 'spec');
        const replaces = text(spec['replaces']);
        const skips = listAt(spec, 'skips').filter((s): s is string => typeof s === 'string');
        const skipRange = text(objectAt(objectAt(csv, 'metadata'), 'annotations')['olm.skipRange']);
        entries.push({
          name: current,
          ...(replaces === undefined ? {} : { replaces }),
          ...(skips.length === 0 ? {} : { skips }),
          ...(skipRange === undefined ? {} : { skipRange }),
        });
        members.add(current);
        current = replaces;
      }
      lines.push({ schema: 'olm.channel', package: packageName, name: channelName, entries });
    }
    for (const csvName of [...members].sort()) {
      const csv = csvs.get(csvName);
      if (csv === undefined) continue;
      used.add(csvName);
      lines.push(
        bundleOf(packageName, csvName, csv, crds, warnings, origin('clusterServiceVersions')),
      );
    }
  }
  for (const csvName of csvs.keys()) {
    if (used.has(csvName)) continue;
    warnings.push({
      code: W.BundleNotInChannel,
      bundle: csvName,
      origin: origin('clusterServiceVersions'),
      message: `ClusterServiceVersion "${csvName}" is not on the replaces chain of any channel's currentCSV; dropped`,
    });
  }
  const objects = parseCatalogText(
    lines.map((line) => JSON.stringify(line)).join('\n'),
    `configmap/${name}`,
    'json',
  );
  return { layout: 'configmap', objects, warnings };
}

function bundleOf(
  packageName: string,
  csvName: string,
  csv: Json,
  crds: ReadonlyMap<string, Json>,
  warnings: CatalogWarning[],
  origin: string,
): Json {
  const spec = objectAt(csv, 'spec');
  const properties: Json[] = [
    {
      type: 'olm.package',
      value: { packageName, version: text(spec['version']) ?? '' },
    },
  ];
  const manifests: unknown[] = [csv];
  const ownedCrds = listAt(objectAt(spec, 'customresourcedefinitions'), 'owned').filter(isObject);
  for (const owned of ownedCrds) {
    const api = crdApi(owned, crds);
    if (api !== undefined) properties.push({ type: 'olm.gvk', value: api });
    const crdName = text(owned['name']);
    const crd = crdName === undefined ? undefined : crds.get(crdName);
    if (crd === undefined) {
      warnings.push({
        code: W.BundleObjectInvalid,
        package: packageName,
        bundle: csvName,
        origin,
        message: `owned CRD "${crdName ?? '?'}" of "${csvName}" is not in customResourceDefinitions; the bundle carries no manifest for it`,
      });
    } else if (!manifests.includes(crd)) manifests.push(crd);
  }
  for (const required of listAt(objectAt(spec, 'customresourcedefinitions'), 'required')) {
    const api = isObject(required) ? crdApi(required, crds) : undefined;
    if (api !== undefined) properties.push({ type: 'olm.gvk.required', value: api });
  }
  const apiServices = objectAt(spec, 'apiservicedefinitions');
  for (const owned of listAt(apiServices, 'owned')) {
    const api = isObject(owned) ? apiServiceApi(owned) : undefined;
    if (api !== undefined) properties.push({ type: 'olm.gvk', value: api });
  }
  for (const required of listAt(apiServices, 'required')) {
    const api = isObject(required) ? apiServiceApi(required) : undefined;
    if (api !== undefined) properties.push({ type: 'olm.gvk.required', value: api });
  }
  properties.push(...manifests.map(bundleObject));
  return { schema: 'olm.bundle', name: csvName, package: packageName, properties };
}
