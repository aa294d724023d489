// What a pulled bundle image holds: every file directly in its manifests directory (whatever
// the extension, YAML or JSON, several documents each, as operator-registry reads them) and
// metadata/annotations.yaml. Pure; throws a BundleImageError saying what is missing or wrong.
import { parseAllDocuments } from 'yaml';
import type { PulledImage } from '../oci/index.js';
import { BundleImageError, BundleImageErrorCode as Code, type UnpackedBundle } from './types.js';

/** The bundle label (and annotation) naming the manifests directory. */
export const manifestsLabel = 'operators.operatorframework.io.bundle.manifests.v1';
/** The bundle label (and annotation) naming the metadata directory. */
export const metadataLabel = 'operators.operatorframework.io.bundle.metadata.v1';

function directoryOf(value: string | undefined, fallback: string): string {
  const dir = (value ?? fallback).replace(/^\.?\/+|\/+$/g, '');
  return dir === '' ? fallback : `${dir}/`;
}

// Files directly in `dir` (subdirectories are not read, as upstream's directory walk skips them).
function filesIn(image: PulledImage, dir: string): string[] {
  return [...image.files.keys()]
    .filter((path) => path.startsWith(dir) && !path.slice(dir.length).includes('/'))
    .sort();
}

// Kubernetes objects of one manifest file: every non-empty YAML document (JSON is YAML).
function objectsOfFile(path: string, text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) {
      throw new BundleImageError(
        Code.BadManifest,
        `manifest ${path} is not valid YAML or JSON: ${doc.errors[0]?.message.split('\n')[0] ?? ''}`,
      );
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new BundleImageError(Code.BadManifest, `manifest ${path} is not a Kubernetes object`);
    }
    const object = value as Record<string, unknown>;
    const name = (object['metadata'] as { name?: unknown } | undefined)?.name;
    if (typeof object['kind'] !== 'string' || typeof object['apiVersion'] !== 'string') {
      throw new BundleImageError(Code.BadManifest, `manifest ${path} has no apiVersion or kind`);
    }
    if (typeof name !== 'string' || name === '') {
      throw new BundleImageError(
        Code.BadManifest,
        `manifest ${path} (${object['kind']}) has no metadata.name`,
      );
    }
    out.push(object);
  }
  return out;
}

function annotationsOf(image: PulledImage, metadataDir: string): Record<string, string> {
  const path = [`${metadataDir}annotations.yaml`, `${metadataDir}annotations.yml`].find((p) =>
    image.files.has(p),
  );
  if (path === undefined) {
    throw new BundleImageError(
      Code.NoAnnotations,
      `bundle image ${image.reference} has no ${metadataDir}annotations.yaml`,
    );
  }
  let value: unknown;
  try {
    value = parseAllDocuments(image.files.get(path)?.toString('utf8') ?? '')[0]?.toJS();
  } catch (error) {
    throw new BundleImageError(
      Code.NoAnnotations,
      `${path} is not YAML: ${(error as Error).message}`,
    );
  }
  const annotations = (value as { annotations?: unknown } | null | undefined)?.annotations;
  if (typeof annotations !== 'object' || annotations === null || Array.isArray(annotations)) {
    throw new BundleImageError(
      Code.NoAnnotations,
      `bundle image ${image.reference}: ${path} has no annotations map`,
    );
  }
  return Object.fromEntries(Object.entries(annotations).map(([k, v]) => [k, String(v)]));
}

/** Reads and checks the bundle a pulled image holds. */
export function bundleOfImage(image: PulledImage): UnpackedBundle {
  // The image labels say where the directories are; the annotations say it again, read after.
  const metadataDir = directoryOf(image.labels[metadataLabel], 'metadata/');
  const annotations = annotationsOf(image, metadataDir);
  const manifestsDir = directoryOf(
    image.labels[manifestsLabel] ?? annotations[manifestsLabel],
    'manifests/',
  );
  const files = filesIn(image, manifestsDir);
  const objects = files.flatMap((path) =>
    objectsOfFile(path, image.files.get(path)?.toString('utf8') ?? ''),
  );
  if (objects.length === 0) {
    throw new BundleImageError(
      Code.NoManifests,
      `bundle image ${image.reference} has no manifests in /${manifestsDir}`,
    );
  }
  const csvs = objects.filter((o) => o['kind'] === 'ClusterServiceVersion').length;
  if (csvs !== 1) {
    throw new BundleImageError(
      Code.CsvCount,
      `bundle image ${image.reference} has ${csvs} ClusterServiceVersions in /${manifestsDir} (must be exactly one)`,
    );
  }
  return { digest: image.digest, image: image.reference, objects, annotations };
}
