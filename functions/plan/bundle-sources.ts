// Where the plan function gets a bundle's manifests: the catalog's content (olm.bundle.object),
// or, for a bundle the catalog gives only by its image (olm.csv.metadata and `image`, as
// `opm render` writes catalogs today), the bundle unpacked from that image — pulled with the
// CatalogSource's pull secrets, checked, and stored by digest for every cluster and replica.
import type { ObjectStore } from '@nats-io/obj';
import {
  BundleImageError,
  BundleImageErrorCode,
  catalogPullCredentials,
  type BundleUnpacker,
  type UnpackedBundle,
} from '../../shared/bundle-image/index.js';
import type { RegistryAccess } from '../../shared/registry-access/index.js';
import { decodeBundleManifests, type CatalogContent } from '../../shared/catalog/index.js';
import { CatalogIndexCache, fetchCatalogContent } from '../../shared/handoff/index.js';
import type { PlannedBundle } from '../../shared/install-plan/index.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import type { RecordedBundle } from '../../shared/resolver/record.js';
import type { BundleImageRead } from './bundle-lookups.js';

type Manifests = PlannedBundle['manifests'];

/** What reading a bundle of an image uses of the cluster: its client, and its CatalogSources. */
export interface CatalogReader {
  client: KubeClient;
  /** The CatalogSource (its spec.secrets name the pull secrets), undefined when missing. */
  catalogSource(catalog: { namespace: string; name: string }): Promise<KubeObject | undefined>;
}

/** Reads bundle manifests for plans; holds the digest-keyed caches of one process. */
export class BundleSources {
  readonly #store: ObjectStore;
  readonly #indexes: CatalogIndexCache;
  readonly #contents = new Map<string, Promise<CatalogContent>>();

  constructor(
    store: ObjectStore,
    private readonly unpacker: BundleUnpacker,
    private readonly access: RegistryAccess,
  ) {
    this.#store = store;
    this.#indexes = new CatalogIndexCache(store, 8);
  }

  // Contents are large; a few recent digests serve the plans being written.
  #contentOf(digest: string): Promise<CatalogContent> {
    let entry = this.#contents.get(digest);
    if (entry === undefined) {
      entry = fetchCatalogContent(this.#store, digest);
      entry.catch(() => this.#contents.delete(digest));
      this.#contents.set(digest, entry);
      for (const oldest of this.#contents.keys()) {
        if (this.#contents.size <= 4) break;
        this.#contents.delete(oldest);
      }
    }
    return entry;
  }

  /**
   * The manifests of `b` (an Error when they cannot be had), and, for a bundle from its image,
   * what its lookup found.
   */
  async manifestsOf(
    reader: CatalogReader,
    b: RecordedBundle,
  ): Promise<{ manifests: Manifests | Error; image?: BundleImageRead }> {
    const catalog = `catalog ${b.catalog.namespace}/${b.catalog.name}`;
    try {
      if (b.catalogDigest === null) throw new Error(`${catalog} has no stored index`);
      const content = (await this.#contentOf(b.catalogDigest)).get(b.package, b.name);
      if (content === undefined)
        throw new Error(`${catalog} has no manifests for bundle ${b.name}`);
      if (content.objects.length > 0) return { manifests: decodeBundleManifests(content) };
      const image = (await this.#indexes.get(b.catalogDigest)).getBundle(b.package, b.name)?.image;
      if (image === undefined || image === '') {
        throw new Error(`${catalog} has neither manifests nor an image for bundle ${b.name}`);
      }
      return await this.#unpacked(reader, b, image);
    } catch (error) {
      return { manifests: error as Error };
    }
  }

  async #unpacked(
    reader: CatalogReader,
    b: RecordedBundle,
    image: string,
  ): Promise<{ manifests: Manifests | Error; image: BundleImageRead }> {
    try {
      const credentials = await catalogPullCredentials(
        reader.client,
        b.catalog,
        await reader.catalogSource(b.catalog),
        this.access.credentials,
      );
      const { bundle } = await this.unpacker.unpack(image, credentials);
      return { manifests: manifestsOfUnpacked(bundle, b.name), image: { image } };
    } catch (error) {
      if (!(error instanceof BundleImageError)) throw error;
      return {
        manifests: error,
        image: { image, problem: { message: error.message, retryable: error.retryable } },
      };
    }
  }
}

/** The manifests of an unpacked bundle, its CSV checked to be the bundle the catalog names. */
export function manifestsOfUnpacked(bundle: UnpackedBundle, name: string): Manifests {
  const csv = bundle.objects.find((o) => o['kind'] === 'ClusterServiceVersion');
  const csvName = (csv?.['metadata'] as { name?: string } | undefined)?.name;
  if (csvName !== name) {
    throw new BundleImageError(
      BundleImageErrorCode.CsvMismatch,
      `bundle image ${bundle.image} holds ClusterServiceVersion ${csvName ?? '(none)'}, but the catalog names the bundle ${name}`,
    );
  }
  return { csv, others: bundle.objects.filter((o) => o !== csv) };
}
