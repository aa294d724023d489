// Catalog images for the offline commands (`olmq resolve --catalog NAME=IMAGE`, `olmq registry
// serve --image REF`): which values name an image rather than a directory, and the File-Based
// Catalog pulled from one, with the same registry settings as the catalog function.
import { existsSync } from 'node:fs';
import { catalogObjectsOfImage } from '../functions/catalog/image-source.js';
import {
  RegistryAccessConfigError,
  registryAccessOf,
  splitFiles,
} from '../shared/registry-access/index.js';
import type { CatalogObject } from '../shared/catalog/index.js';
import { OciError, parseImageReference } from '../shared/oci/index.js';

/** A catalog image that cannot be used; the message names the flag. */
export class CatalogImageError extends Error {
  override readonly name = 'CatalogImageError';
}

/**
 * Whether `value` names an image: not an existing path, not written as a path (./, ../, /, ~),
 * and a reference with a registry host or a tag or digest (quay.io/org/cat:v1, localhost:5000/cat).
 */
export function looksLikeImage(value: string): boolean {
  if (existsSync(value) || /^(\.{1,2}\/|\/|~)/.test(value)) return false;
  return /[:@]/.test(value) || /^[^/]+[.:][^/]*\//.test(value) || value.startsWith('localhost/');
}

/** Registry settings of the offline commands. */
export interface ImageAccessFlags {
  registryAuthFile: string | undefined;
  registryCaFiles: string | undefined;
}

/** Pulls `image` and returns its File-Based Catalog objects; `flag` names the option in errors. */
export async function catalogObjectsFromImage(
  image: string,
  flag: string,
  flags: ImageAccessFlags,
): Promise<CatalogObject[]> {
  try {
    parseImageReference(image);
  } catch (error) {
    throw new CatalogImageError(`${flag}: ${(error as Error).message}`);
  }
  let access;
  try {
    access = await registryAccessOf(
      {
        ...(flags.registryAuthFile === undefined
          ? {}
          : { registryAuthFile: flags.registryAuthFile }),
        registryCaFiles: splitFiles(flags.registryCaFiles),
        registryMirrors: [],
      },
      { userAgent: 'olmq-cli' },
    );
  } catch (error) {
    if (error instanceof RegistryAccessConfigError) throw new CatalogImageError(error.message);
    throw error;
  }
  try {
    const pulled = await access.client.pullImage(image, {
      ...(access.credentials === undefined ? {} : { credentials: access.credentials }),
    });
    return catalogObjectsOfImage(pulled);
  } catch (error) {
    if (error instanceof OciError) {
      throw new CatalogImageError(
        `${flag}: failed to pull catalog image ${image}: ${error.message}`,
      );
    }
    throw new CatalogImageError(`${flag}: catalog image ${image} ${(error as Error).message}`);
  }
}
