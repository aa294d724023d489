// A bundle's manifests as the registry API carries them: each object as JSON text (the catalog
// keeps base64 of JSON or YAML), the ClusterServiceVersion picked out as csvJson, and for
// bundles that only have olm.csv.metadata a stub CSV built from it, as operator-registry does.
import { parse as parseYaml } from 'yaml';
import type { BundleContent } from '../catalog/index.js';

/** The manifests fields of an api.Bundle. */
export interface BundleManifestsJson {
  /** The CSV as JSON, or '' when the bundle has none. */
  readonly csvJson: string;
  /** Every object as JSON, the CSV included. */
  readonly objects: readonly string[];
}

/** What a stub CSV takes from the package (as upstream copies it when the metadata lacks it). */
export interface PackageFacts {
  /** olm.package description. */
  readonly description: string;
  /** olm.package icon, if any. */
  readonly icon: { readonly base64data: string; readonly mediatype: string } | null;
}

// The kind of a JSON object when its first or second member settles it (as Kubernetes and
// operator-registry write objects); otherwise the object is parsed.
const leadingKind = /^\s*\{\s*(?:"apiVersion"\s*:\s*"[^"\\]*"\s*,\s*)?"kind"\s*:\s*"([^"\\]*)"/;

function kindOfJson(text: string): string | undefined {
  const found = leadingKind.exec(text.slice(0, 512))?.[1];
  if (found !== undefined) return found;
  try {
    const value = JSON.parse(text) as unknown;
    const kind =
      typeof value === 'object' && value !== null
        ? (value as Record<string, unknown>)['kind']
        : undefined;
    return typeof kind === 'string' ? kind : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One olm.bundle.object value as JSON text, or undefined when it is not base64 of a JSON/YAML
 * object (the index build already warned about those). JSON is passed through unchanged.
 */
export function manifestJson(data: string): string | undefined {
  const text = Buffer.from(data, 'base64').toString('utf8');
  const first = /\S/.exec(text)?.[0];
  if (first === '{') return text;
  try {
    const value: unknown = parseYaml(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/** The manifests of a bundle as JSON, with a stub CSV when only olm.csv.metadata describes it. */
export function bundleManifestsJson(
  name: string,
  version: string,
  content: BundleContent | undefined,
  pkg: PackageFacts | undefined,
): BundleManifestsJson {
  if (content === undefined) return { csvJson: '', objects: [] };
  const objects: string[] = [];
  let csvJson = '';
  for (const data of content.objects) {
    const json = manifestJson(data);
    if (json === undefined) continue;
    objects.push(json);
    if (csvJson === '' && kindOfJson(json) === 'ClusterServiceVersion') csvJson = json;
  }
  if (csvJson === '' && isRecord(content.csvMetadata)) {
    csvJson = JSON.stringify(stubCsv(name, version, content, content.csvMetadata, pkg));
    if (objects.length === 0) objects.push(csvJson);
  }
  return { csvJson, objects };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function defined(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== ''));
}

// A ClusterServiceVersion made from olm.csv.metadata, shaped like operator-registry's stub:
// enough for install modes, owned APIs and display, with a "deployment" strategy stub.
function stubCsv(
  name: string,
  version: string,
  content: BundleContent,
  m: Record<string, unknown>,
  pkg: PackageFacts | undefined,
): Record<string, unknown> {
  const annotations = isRecord(m['annotations']) ? { ...m['annotations'] } : {};
  const text = (key: string): string | undefined =>
    typeof m[key] === 'string' && m[key] !== '' ? m[key] : undefined;
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: defined({
      name,
      annotations,
      labels: isRecord(m['labels']) ? m['labels'] : undefined,
    }),
    spec: defined({
      apiservicedefinitions: m['apiServiceDefinitions'],
      customresourcedefinitions: m['crdDescriptions'],
      description: text('description') ?? pkg?.description,
      displayName: text('displayName'),
      icon: pkg?.icon === null || pkg?.icon === undefined ? undefined : [pkg.icon],
      install: { strategy: 'deployment' },
      installModes: m['installModes'],
      keywords: m['keywords'],
      links: m['links'],
      maintainers: m['maintainers'],
      maturity: m['maturity'],
      minKubeVersion: m['minKubeVersion'],
      nativeAPIs: m['nativeAPIs'],
      provider: m['provider'],
      relatedImages: content.relatedImages.length > 0 ? content.relatedImages : undefined,
      version,
    }),
  };
}
