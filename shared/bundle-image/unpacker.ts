// Unpacks bundle images: the reference's digest (no request when the reference pins one, as
// `opm render` writes them), then the bundle stored under that digest, else a pull, the checks
// of contents.ts, and a store. Concurrent asks for one digest share one unpack; recent digests
// stay in memory.
import type { ObjectStore } from '@nats-io/obj';
import {
  OciError,
  type CredentialLookup,
  type PullLimits,
  type RegistryClient,
} from '../oci/index.js';
import { bundleOfImage } from './contents.js';
import { readUnpackedBundle, storeUnpackedBundle } from './store.js';
import { BundleImageError, BundleImageErrorCode, type UnpackedBundle } from './types.js';

/** Options of a BundleUnpacker. */
export interface BundleUnpackerOptions {
  client: RegistryClient;
  store: ObjectStore;
  /** Pull limits for bundle images (defaults: the client's). */
  limits?: Partial<PullLimits>;
  /** Unpacked bundles kept in memory (default 64). */
  capacity?: number;
}

/** How an unpack went, for metrics and logs. */
export type UnpackSource = 'memory' | 'store' | 'registry';

/** Pulls, checks and stores bundle images by digest. */
export class BundleUnpacker {
  readonly #options: BundleUnpackerOptions;
  readonly #recent = new Map<string, Promise<UnpackedBundle>>();

  constructor(options: BundleUnpackerOptions) {
    this.#options = options;
  }

  /** The bundle of `image`; throws a BundleImageError saying why it cannot be had. */
  async unpack(
    image: string,
    credentials: CredentialLookup | undefined,
  ): Promise<{ bundle: UnpackedBundle; source: UnpackSource }> {
    const pull = credentials === undefined ? {} : { credentials };
    const digest = await this.#pulling(image, () =>
      this.#options.client.resolveDigest(image, pull),
    );
    const cached = this.#recent.get(digest);
    if (cached !== undefined) {
      this.#recent.delete(digest);
      this.#recent.set(digest, cached);
      return { bundle: await cached, source: 'memory' };
    }
    let source: UnpackSource = 'store';
    const entry = (async () => {
      const stored = await readUnpackedBundle(this.#options.store, digest);
      if (stored !== undefined) return stored;
      source = 'registry';
      const pulled = await this.#pulling(image, () =>
        this.#options.client.pullImage(image, {
          ...pull,
          ...(this.#options.limits === undefined ? {} : { limits: this.#options.limits }),
        }),
      );
      // Kept under the digest the reference resolves to, so the next ask finds it before pulling.
      const bundle = { ...bundleOfImage(pulled), digest };
      await storeUnpackedBundle(this.#options.store, bundle);
      return bundle;
    })();
    entry.catch(() => this.#recent.delete(digest));
    this.#recent.set(digest, entry);
    for (const oldest of this.#recent.keys()) {
      if (this.#recent.size <= (this.#options.capacity ?? 64)) break;
      this.#recent.delete(oldest);
    }
    return { bundle: await entry, source };
  }

  // Registry errors become bundle errors naming the image; the OciError stays as the cause.
  async #pulling<T>(image: string, action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (error) {
      if (!(error instanceof OciError)) throw error;
      throw new BundleImageError(
        BundleImageErrorCode.PullFailed,
        `failed to pull bundle image ${image}: ${error.message}`,
        { retryable: error.retryable, cause: error },
      );
    }
  }
}
