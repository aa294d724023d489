// Catalog images read directly from their registry (no registry Pod): which image sources are
// read this way, the pull credentials (those of upstream's registry Pod: spec.secrets, the
// ServiceAccount named after the CatalogSource, then the operator-wide auth file), the
// File-Based Catalog found in a pulled image, and the read itself — a HEAD when only a poll
// is due, a pull when the digest changed.
import type { CatalogSource } from '../../shared/api/catalogsource.js';
import {
  CatalogError,
  formatOfFile,
  parseCatalogText,
  type CatalogObject,
} from '../../shared/catalog/index.js';
import { compileIgnoreRules, type IgnoreRules } from '../../shared/catalog/index-ignore.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import {
  OciError,
  type CredentialLookup,
  type PulledImage,
  type RegistryClient,
} from '../../shared/oci/index.js';
import {
  PullSecretError,
  RegistryAccessConfigError,
  catalogRegistryPod,
  pullCredentials,
  registryAccessOf,
  type RegistryAccess,
} from '../../shared/registry-access/index.js';
import { CatalogConfigError, type CatalogConfig, type ImageMode } from './config.js';
import type { SourceRead } from './types.js';

/** Per-CatalogSource choice between reading the image directly and upstream's registry Pod. */
export const imageModeAnnotation = 'olmq.operatorframework.io/catalog-image-mode';

/** The label naming where a catalog image keeps its File-Based Catalog. */
export const configsLabel = 'operators.operatorframework.io.index.configs.v1';
/** The label of old SQLite index images, which olmq serves in pod mode only. */
export const databaseLabel = 'operators.operatorframework.io.index.database.v1';

/** The mode of a CatalogSource: its annotation when set to a known mode, else the default. */
export function imageModeOf(object: KubeObject, operatorDefault: ImageMode): ImageMode {
  const value = object.metadata.annotations?.[imageModeAnnotation];
  return value === 'pod' || value === 'direct' ? value : operatorDefault;
}

/** The source version of a directly read image: the reference and the digest it resolved to. */
export function imageSourceVersion(image: string, digest: string): string {
  return `image:${image}@${digest}`;
}

/** The credentials of a CatalogSource, as upstream's registry Pod for it would pull. */
export async function catalogCredentials(
  client: KubeClient,
  source: { namespace: string; name: string; spec: CatalogSource['spec'] },
  operatorWide: CredentialLookup | undefined,
): Promise<CredentialLookup> {
  const { namespace, name, spec } = source;
  return pullCredentials(
    client,
    catalogRegistryPod({ namespace, name, secrets: spec.secrets ?? [] }),
    operatorWide,
  );
}

/**
 * The File-Based Catalog objects of a pulled catalog image: every .json/.yaml/.yml file below
 * the directory its configs label names (default /configs), minus what .indexignore files
 * exclude, in path order. Throws an error saying why when there is none.
 */
export function catalogObjectsOfImage(image: PulledImage): CatalogObject[] {
  const root = (image.labels[configsLabel] ?? '/configs').replace(/^\/+|\/+$/g, '');
  const prefix = root === '' ? '' : `${root}/`;
  const below = [...image.files.keys()].filter((path) => path.startsWith(prefix)).sort();
  const ignores = below
    .filter((path) => path.endsWith('/.indexignore') || path === `${prefix}.indexignore`)
    .map((path) => ({
      dir: path.slice(0, path.length - '.indexignore'.length),
      rules: compileIgnoreRules(image.files.get(path)?.toString('utf8') ?? ''),
    }));
  const files = below.filter((path) => formatOfFile(path) !== undefined && !ignored(path, ignores));
  if (files.length === 0) {
    const sqlite = image.labels[databaseLabel];
    throw new Error(
      sqlite !== undefined
        ? `is a SQLite index image (${databaseLabel}=${sqlite}), which olmq reads only in pod mode: annotate the CatalogSource ${imageModeAnnotation}=pod`
        : `has no File-Based Catalog under /${root} (label ${configsLabel}${image.labels[configsLabel] === undefined ? ' not set, default /configs' : `=${image.labels[configsLabel]}`})`,
    );
  }
  const objects: CatalogObject[] = [];
  for (const path of files) {
    const text = image.files.get(path)?.toString('utf8') ?? '';
    objects.push(
      ...parseCatalogText(text, path.slice(prefix.length), formatOfFile(path) ?? 'auto'),
    );
  }
  return objects;
}

function ignored(path: string, scopes: readonly { dir: string; rules: IgnoreRules }[]): boolean {
  return scopes.some((scope) => {
    if (!path.startsWith(scope.dir)) return false;
    const relative = path.slice(scope.dir.length);
    const parts = relative.split('/');
    // A file is ignored when it or one of its folders (below the scope) is.
    for (let i = 1; i < parts.length; i++) {
      if (scope.rules.ignores(parts.slice(0, i).join('/'), true)) return true;
    }
    return scope.rules.ignores(relative, false);
  });
}

/** What reading an image source gave. */
export type ImageRead =
  | { kind: 'unchanged' }
  | { kind: 'pulled'; image: PulledImage; sourceVersion: string }
  | { kind: 'failed'; message: string; retryable: boolean };

/**
 * Reads an image source: when `served` (the version of the index being served) is given, a
 * HEAD first, and a pull only when the digest moved; otherwise a pull.
 */
export async function readImageSource(input: {
  client: RegistryClient;
  image: string;
  served: string | undefined;
  credentials: () => Promise<CredentialLookup>;
}): Promise<ImageRead> {
  const { client, image } = input;
  try {
    const credentials = await input.credentials();
    if (input.served !== undefined) {
      const digest = await client.resolveDigest(image, { credentials });
      if (imageSourceVersion(image, digest) === input.served) return { kind: 'unchanged' };
    }
    const pulled = await client.pullImage(image, { credentials });
    return {
      kind: 'pulled',
      image: pulled,
      sourceVersion: imageSourceVersion(image, pulled.resolvedDigest),
    };
  } catch (error) {
    if (error instanceof OciError)
      return {
        kind: 'failed',
        message: `failed to pull catalog image ${image}: ${error.message}`,
        retryable: error.retryable,
      };
    if (error instanceof PullSecretError)
      return {
        kind: 'failed',
        message: `failed to pull catalog image ${image}: ${error.message}`,
        retryable: false,
      };
    throw error;
  }
}

/**
 * Reads an image source into what the decision sees: 'checked' when a poll found the same
 * digest, the index built by `index` from a pulled image's FBC, or why it is unusable.
 */
export async function readImageCatalog(input: {
  client: RegistryClient;
  image: string;
  served: string | undefined;
  credentials: () => Promise<CredentialLookup>;
  index: (objects: CatalogObject[], sourceVersion: string, what: string) => SourceRead;
}): Promise<SourceRead> {
  const read = await readImageSource(input);
  if (read.kind === 'unchanged') return { kind: 'checked' };
  if (read.kind === 'failed') return { kind: 'unusable', message: read.message };
  const what = `catalog image ${input.image}`;
  let objects: CatalogObject[];
  try {
    objects = catalogObjectsOfImage(read.image);
  } catch (error) {
    const why = (error as Error).message;
    const message = error instanceof CatalogError ? `is not a usable catalog: ${why}` : why;
    return { kind: 'unusable', message: `${what} ${message}` };
  }
  return input.index(objects, read.sourceVersion, what);
}

/** Builds the registry access from the configuration, reading its files once at start. */
export async function imageAccessOf(
  config: CatalogConfig,
  client: RegistryClient | undefined,
): Promise<RegistryAccess> {
  try {
    return await registryAccessOf(config, {
      userAgent: 'olmq-catalog',
      timeoutMs: config.fetchTimeoutMs,
      ...(client === undefined ? {} : { client }),
    });
  } catch (error) {
    if (error instanceof RegistryAccessConfigError) throw new CatalogConfigError(error.message);
    throw error;
  }
}
