// Bundle content: the manifests of each bundle (olm.bundle.object, kept as the catalog's base64
// strings) and its olm.csv.metadata. Kept apart from the hot index and decoded only when an
// install asks for one bundle.
import { parse as parseYaml } from 'yaml';

/** The manifests of one bundle, still encoded. */
export interface BundleContent {
  /** olm.bundle.object data: base64 of one Kubernetes object (JSON or YAML) each. */
  readonly objects: readonly string[];
  /** The olm.csv.metadata value, or null when the bundle has none. */
  readonly csvMetadata: unknown;
  /** relatedImages of the olm.bundle object. */
  readonly relatedImages: readonly { readonly name: string; readonly image: string }[];
}

/** Read access to the content of a catalog's bundles. */
export interface CatalogContent {
  /** Digest of the catalog the content belongs to. */
  readonly digest: string;
  /** Number of bundles with content. */
  readonly size: number;
  /** The content of bundle `name` of package `pkg`, if the catalog has it. */
  get(pkg: string, name: string): BundleContent | undefined;
  /** Every (package, bundle name) that has content. */
  keys(): Iterable<readonly [pkg: string, name: string]>;
}

/** A decoded Kubernetes object from a bundle. */
export type BundleObject = Readonly<Record<string, unknown>>;

/** Decodes one olm.bundle.object value (base64 of JSON or YAML); throws if it is neither. */
export function decodeBundleObject(data: string): BundleObject {
  const textValue = Buffer.from(data, 'base64').toString('utf8');
  const first = /\S/.exec(textValue)?.[0];
  const value: unknown = first === '{' ? JSON.parse(textValue) : parseYaml(textValue);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError('bundle object is not a Kubernetes object');
  }
  return value as BundleObject;
}

/** The decoded manifests of a bundle, with its ClusterServiceVersion picked out. */
export interface BundleManifests {
  /** The ClusterServiceVersion, if the bundle ships one. */
  readonly csv: BundleObject | undefined;
  /** Every other object (CRDs, RBAC, Services, ...). */
  readonly others: readonly BundleObject[];
}

/** Decodes all manifests of a bundle; throws on an undecodable object. */
export function decodeBundleManifests(content: BundleContent): BundleManifests {
  let csv: BundleObject | undefined;
  const others: BundleObject[] = [];
  for (const data of content.objects) {
    const object = decodeBundleObject(data);
    if (csv === undefined && object['kind'] === 'ClusterServiceVersion') csv = object;
    else others.push(object);
  }
  return { csv, others };
}

/** Content held in memory, as the index builder produces it. */
export class InMemoryCatalogContent implements CatalogContent {
  /** Digest of the catalog the content belongs to. */
  readonly digest: string;
  readonly #bundles: ReadonlyMap<string, { pkg: string; name: string; content: BundleContent }>;

  constructor(
    digest: string,
    bundles: ReadonlyMap<string, { pkg: string; name: string; content: BundleContent }>,
  ) {
    this.digest = digest;
    this.#bundles = bundles;
  }

  /** Number of bundles with content. */
  get size(): number {
    return this.#bundles.size;
  }

  /** The content of bundle `name` of package `pkg`. */
  get(pkg: string, name: string): BundleContent | undefined {
    return this.#bundles.get(`${pkg}\u0000${name}`)?.content;
  }

  /** Every (package, bundle name) with content. */
  *keys(): Iterable<readonly [string, string]> {
    for (const { pkg, name } of this.#bundles.values()) yield [pkg, name];
  }
}
