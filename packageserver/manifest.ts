// PackageManifests (packages.operators.coreos.com/v1) from a catalog index and its bundle
// content, as upstream's packageserver builds them: one per package of a CatalogSource, with
// each channel's head CSV described, the provider and labels taken from the default channel's
// CSV, and the icon kept apart (upstream strips icons from get/list and serves them from the
// `icon` subresource). Pure: no I/O.
import {
  decodeBundleManifests,
  type BundleObject,
  type CatalogBundle,
  type CatalogContent,
  type CatalogIndex,
} from '../shared/catalog/index.js';

/** API group, version and resource served. */
export const packagesGroup = 'packages.operators.coreos.com';
export const packagesVersion = 'v1';
export const packagesResource = 'packagemanifests';
export const packageManifestKind = 'PackageManifest';
export const packagesApiVersion = `${packagesGroup}/${packagesVersion}`;

/** Label prefixes and defaults of operatorframework.io os/arch support, as upstream. */
const osLabelPrefix = 'operatorframework.io/os';
const archLabelPrefix = 'operatorframework.io/arch';
const defaultOsLabel = 'operatorframework.io/os.linux';
const defaultArchLabel = 'operatorframework.io/arch.amd64';

/** The CatalogSource facts a PackageManifest carries. */
export interface CatalogFacts {
  namespace: string;
  name: string;
  /** spec.displayName ('' when unset). */
  displayName: string;
  /** spec.publisher ('' when unset). */
  publisher: string;
  /** The CatalogSource's labels (copied onto each package, as upstream). */
  labels: Readonly<Record<string, string>>;
  /** The CatalogSource's creationTimestamp (upstream uses it for every package), or null. */
  creationTimestamp: string | null;
}

/** A JSON value as the API writes it. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
/** A JSON object. */
export type JsonMap = { [key: string]: Json };

/** A package's icon, served by the icon subresource. */
export interface PackageIcon {
  /** Base64 image data. */
  base64data: string;
  /** Media type, e.g. image/svg+xml. */
  mediatype: string;
  /** The channel and CSV it comes from (for the ETag). */
  channel: string;
  csv: string;
}

/** One package of one catalog. */
export interface PackageRecord {
  /** The PackageManifest, without icons, in its catalog's namespace. */
  manifest: JsonMap;
  /** Labels of the manifest (for selectors without digging into the JSON). */
  labels: Readonly<Record<string, string>>;
  /** The default channel's first icon, if any. */
  icon: PackageIcon | null;
}

/** Something about one package that made the build leave part of it out. */
export interface PackageProblem {
  package: string;
  channel?: string;
  message: string;
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isMap(value)) return out;
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v;
  return out;
}

// Go's encoding/json with omitempty drops "", empty slices and empty maps.
function put(target: JsonMap, key: string, value: Json | undefined): void {
  if (value === undefined || value === '' || value === null) return;
  if (Array.isArray(value) && value.length === 0) return;
  if (isMap(value) && Object.keys(value).length === 0) return;
  target[key] = value;
}

function appLink(value: unknown): JsonMap {
  const out: JsonMap = {};
  if (!isMap(value)) return out;
  put(out, 'name', str(value['name']));
  put(out, 'url', str(value['url']));
  return out;
}

function crdDescriptions(value: unknown): Json[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isMap).map((crd) => {
    // Only the fields upstream keeps, to keep responses small.
    const out: JsonMap = {
      name: str(crd['name']),
      version: str(crd['version']),
      kind: str(crd['kind']),
    };
    put(out, 'displayName', str(crd['displayName']));
    put(out, 'description', str(crd['description']));
    return out;
  });
}

function apiServiceDescriptions(value: unknown): Json[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isMap).map((api) => {
    const out: JsonMap = {
      name: str(api['name']),
      group: str(api['group']),
      version: str(api['version']),
      kind: str(api['kind']),
    };
    put(out, 'displayName', str(api['displayName']));
    put(out, 'description', str(api['description']));
    return out;
  });
}

function ownedRequired(value: unknown, describe: (list: unknown) => Json[]): JsonMap {
  const out: JsonMap = {};
  if (!isMap(value)) return out;
  put(out, 'owned', describe(value['owned']));
  put(out, 'required', describe(value['required']));
  return out;
}

// The images a CSV names: its deployments' containers and init containers, and
// spec.relatedImages (sorted: upstream's order comes from a Go map and carries no meaning).
function imagesOf(spec: Record<string, unknown>): string[] {
  const images = new Set<string>();
  const strategy = isMap(spec['install']) ? spec['install']['spec'] : undefined;
  const deployments = isMap(strategy) ? strategy['deployments'] : undefined;
  for (const deployment of Array.isArray(deployments) ? deployments.filter(isMap) : []) {
    const podSpec = isMap(deployment['spec']) ? deployment['spec']['template'] : undefined;
    const pod = isMap(podSpec) && isMap(podSpec['spec']) ? podSpec['spec'] : {};
    for (const list of [pod['containers'], pod['initContainers']]) {
      for (const container of Array.isArray(list) ? list.filter(isMap) : []) {
        const image = str(container['image']);
        if (image !== '') images.add(image);
      }
    }
  }
  const related = spec['relatedImages'];
  for (const item of Array.isArray(related) ? related.filter(isMap) : []) {
    const image = str(item['image']);
    if (image !== '') images.add(image);
  }
  return [...images].sort();
}

/** The parts of a CSV a PackageManifest shows. */
interface CsvView {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  spec: Record<string, unknown>;
}

function csvViewOf(csv: BundleObject, bundle: CatalogBundle): CsvView {
  const metadata = isMap(csv['metadata']) ? csv['metadata'] : {};
  return {
    name: str(metadata['name']) || bundle.name,
    labels: stringMap(metadata['labels']),
    annotations: stringMap(metadata['annotations']),
    spec: isMap(csv['spec']) ? csv['spec'] : {},
  };
}

// olm.csv.metadata (bundles given without their manifests) holds the CSV's spec fields plus its
// annotations and labels, which is all a description needs.
function csvViewFromMetadata(metadata: unknown, bundle: CatalogBundle): CsvView | undefined {
  if (!isMap(metadata)) return undefined;
  return {
    name: bundle.name,
    labels: stringMap(metadata['labels']),
    annotations: stringMap(metadata['annotations']),
    spec: { ...metadata, version: bundle.version },
  };
}

/** The CSVDescription of a channel head, plus its icons. */
function describeCsv(
  csv: CsvView,
  bundle: CatalogBundle,
): { description: JsonMap; icons: PackageIcon[] } {
  const spec = csv.spec;
  const description: JsonMap = {};
  put(description, 'displayName', str(spec['displayName']));
  // OperatorVersion always marshals, as a string.
  description['version'] = str(spec['version']) || bundle.version;
  description['provider'] = appLink(spec['provider']);
  put(description, 'annotations', csv.annotations);
  put(description, 'keywords', strings(spec['keywords']));
  put(
    description,
    'links',
    (Array.isArray(spec['links']) ? spec['links'] : []).map((link) => appLink(link)),
  );
  put(
    description,
    'maintainers',
    (Array.isArray(spec['maintainers']) ? spec['maintainers'].filter(isMap) : []).map((m) => {
      const out: JsonMap = {};
      put(out, 'name', str(m['name']));
      put(out, 'email', str(m['email']));
      return out;
    }),
  );
  put(description, 'maturity', str(spec['maturity']));
  put(description, 'description', str(spec['description']));
  put(
    description,
    'installModes',
    (Array.isArray(spec['installModes']) ? spec['installModes'].filter(isMap) : []).map((m) => ({
      type: str(m['type']),
      supported: m['supported'] === true,
    })),
  );
  description['customresourcedefinitions'] = ownedRequired(
    spec['customresourcedefinitions'],
    crdDescriptions,
  );
  description['apiservicedefinitions'] = ownedRequired(
    spec['apiservicedefinitions'],
    apiServiceDescriptions,
  );
  put(
    description,
    'nativeApis',
    (Array.isArray(spec['nativeAPIs']) ? spec['nativeAPIs'].filter(isMap) : []).map((gvk) => ({
      group: str(gvk['group']),
      version: str(gvk['version']),
      kind: str(gvk['kind']),
    })),
  );
  put(description, 'minKubeVersion', str(spec['minKubeVersion']));
  put(description, 'relatedImages', imagesOf(spec));
  const icons = (Array.isArray(spec['icon']) ? spec['icon'].filter(isMap) : [])
    .map((icon) => ({
      base64data: str(icon['base64data']),
      mediatype: str(icon['mediatype']),
      channel: '',
      csv: csv.name,
    }))
    .filter((icon) => icon.base64data !== '');
  return { description, icons };
}

function deprecationOf(message: string | null): JsonMap | undefined {
  return message === null ? undefined : { message };
}

/** Adds the default os/arch support labels when the CSV states none, as upstream does. */
export function withDefaultOsArchLabels(labels: Record<string, string>): Record<string, string> {
  const keys = Object.keys(labels);
  const out = { ...labels };
  if (!keys.some((k) => k.startsWith(osLabelPrefix))) out[defaultOsLabel] = 'supported';
  if (!keys.some((k) => k.startsWith(archLabelPrefix))) out[defaultArchLabel] = 'supported';
  return out;
}

/**
 * Builds the PackageManifests of one catalog. A channel whose head has no CSV is left out (as
 * upstream elides channels whose bundle cannot be read), and a package left without channels is
 * left out entirely; each omission is reported in `problems`.
 */
export function buildPackageRecords(
  catalog: CatalogFacts,
  index: CatalogIndex,
  content: CatalogContent,
): { records: PackageRecord[]; problems: PackageProblem[] } {
  const records: PackageRecord[] = [];
  const problems: PackageProblem[] = [];
  for (const pkg of index.packages) {
    let defaultChannel = pkg.defaultChannel ?? '';
    let defaultElided = false;
    let defaultCsv: CsvView | undefined;
    let provider: JsonMap | undefined;
    let icon: PackageIcon | null = null;
    const channels: JsonMap[] = [];
    for (const channel of index.channelsOf(pkg.name)) {
      const head = channel.head === null ? undefined : index.getBundle(pkg.name, channel.head);
      const csv = head === undefined ? undefined : headCsv(head, content, problems);
      if (head === undefined || csv === undefined) {
        problems.push({
          package: pkg.name,
          channel: channel.name,
          message:
            head === undefined
              ? `channel ${channel.name} has no head bundle; channel left out`
              : `the head ${head.name} of channel ${channel.name} has no ClusterServiceVersion; channel left out`,
        });
        defaultElided ||= channel.name === defaultChannel;
        continue;
      }
      const { description, icons } = describeCsv(csv, head);
      if (defaultCsv === undefined || channel.name === defaultChannel) defaultCsv = csv;
      if (provider === undefined || channel.name === defaultChannel)
        provider = appLink(csv.spec['provider']);
      if ((icon === null || channel.name === defaultChannel) && icons[0] !== undefined)
        icon = { ...icons[0], channel: channel.name };
      const entry: JsonMap = {
        name: channel.name,
        currentCSV: csv.name,
        currentCSVDesc: description,
      };
      put(entry, 'deprecation', deprecationOf(channel.deprecation));
      entry['entries'] = channel.entries.map((e) => {
        const bundle = index.getBundle(pkg.name, e.name);
        const out: JsonMap = { name: e.name };
        put(out, 'version', bundle?.version ?? '');
        put(out, 'deprecation', deprecationOf(bundle?.deprecation ?? null));
        return out;
      });
      channels.push(entry);
    }
    if (channels.length === 0 || defaultCsv === undefined) {
      problems.push({ package: pkg.name, message: 'package has no valid channels; left out' });
      continue;
    }
    if (defaultElided || defaultChannel === '') defaultChannel = str(channels[0]?.['name']);
    const providerLink = provider ?? {};
    const labels = withDefaultOsArchLabels({
      ...catalog.labels,
      catalog: catalog.name,
      'catalog-namespace': catalog.namespace,
      provider: str(providerLink['name']),
      'provider-url': str(providerLink['url']),
      ...defaultCsv.labels,
    });
    const metadata: JsonMap = {
      name: pkg.name,
      namespace: catalog.namespace,
      labels,
      creationTimestamp: catalog.creationTimestamp,
    };
    const status: JsonMap = {
      catalogSource: catalog.name,
      catalogSourceDisplayName: catalog.displayName,
      catalogSourcePublisher: catalog.publisher,
      catalogSourceNamespace: catalog.namespace,
      provider: providerLink,
      packageName: pkg.name,
    };
    put(status, 'deprecation', deprecationOf(pkg.deprecation));
    status['channels'] = channels;
    status['defaultChannel'] = defaultChannel;
    records.push({
      manifest: {
        kind: packageManifestKind,
        apiVersion: packagesApiVersion,
        metadata,
        spec: {},
        status,
      },
      labels,
      icon,
    });
  }
  return { records, problems };
}

function headCsv(
  bundle: CatalogBundle,
  content: CatalogContent,
  problems: PackageProblem[],
): CsvView | undefined {
  const bundleContent = content.get(bundle.package, bundle.name);
  if (bundleContent === undefined) return undefined;
  try {
    const { csv } = decodeBundleManifests(bundleContent);
    if (csv !== undefined) return csvViewOf(csv, bundle);
  } catch (error) {
    problems.push({
      package: bundle.package,
      message: `bundle ${bundle.name}: manifests cannot be decoded (${error instanceof Error ? error.message : String(error)})`,
    });
  }
  return csvViewFromMetadata(bundleContent.csvMetadata, bundle);
}
