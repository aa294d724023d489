// Builds the catalog index from parsed objects. Pure: objects in, { index, content, warnings }
// out. Tolerant like a careful operator would be: irregular data is kept when it can still be
// used, dropped when it cannot, and every such decision is a warning with a stable code.
// Objects are admitted into drafts (object-admission.ts, bundle-admission.ts), then each
// package is finished (finished-package.ts).
import { InMemoryCatalogContent, type BundleContent } from './bundle-content.js';
import { addBundle } from './bundle-admission.js';
import { catalogDigest } from './digest.js';
import { compareText, WarningSink, type DraftPackage } from './draft.js';
import type { CatalogObject } from './fbc-text.js';
import { finishPackage } from './finished-package.js';
import {
  CatalogIndex,
  type CatalogBundle,
  type CatalogChannel,
  type CatalogPackage,
} from './model.js';
import { addChannel, addDeprecations, addPackage, nameOf, packageOf } from './object-admission.js';
import { CatalogWarningCode as W, type CatalogWarning } from './problems.js';

/** What building an index yields. */
export interface CatalogBuildResult {
  /** The hot index. */
  readonly index: CatalogIndex;
  /** The bundles' manifests, kept apart from the index. */
  readonly content: InMemoryCatalogContent;
  /** Irregularities met, in catalog order. */
  readonly warnings: readonly CatalogWarning[];
}

/** Builds the index, content and warnings of a catalog from its parsed objects. */
export function buildCatalogIndex(objects: readonly CatalogObject[]): CatalogBuildResult {
  const warnings = new WarningSink();
  const digest = catalogDigest(objects);
  const packages = new Map<string, DraftPackage>();
  const bundleObjects: CatalogObject[] = [];
  const channelObjects: CatalogObject[] = [];
  const deprecationObjects: CatalogObject[] = [];
  const unknownSchemas = new Set<string>();

  for (const object of objects) {
    switch (object.schema) {
      case 'olm.package':
        addPackage(object, packages, warnings);
        break;
      case 'olm.bundle':
        bundleObjects.push(object);
        break;
      case 'olm.channel':
        channelObjects.push(object);
        break;
      case 'olm.deprecations':
        deprecationObjects.push(object);
        break;
      case '':
        warnings.add(W.SchemaMissing, 'object has no "schema" field; ignored', {
          origin: object.origin,
        });
        break;
      default: {
        const pkg = packageOf(object.value) ?? nameOf(object.value) ?? '';
        const seenKey = `${object.schema}\u0000${pkg}`;
        if (unknownSchemas.has(seenKey)) break;
        unknownSchemas.add(seenKey);
        warnings.add(
          W.UnknownSchema,
          `objects with schema "${object.schema}" are not used by olmq; ignored`,
          { ...(pkg === '' ? {} : { package: pkg }), origin: object.origin },
        );
      }
    }
  }
  for (const object of bundleObjects) addBundle(object, packages, warnings);
  for (const object of channelObjects) addChannel(object, packages, warnings);
  for (const object of deprecationObjects) addDeprecations(object, packages, warnings);

  const outPackages: CatalogPackage[] = [];
  const outChannels: CatalogChannel[] = [];
  const outBundles: CatalogBundle[] = [];
  const contents = new Map<string, { pkg: string; name: string; content: BundleContent }>();

  for (const pkg of [...packages.values()].sort((a, b) => compareText(a.name, b.name))) {
    const built = finishPackage(pkg, warnings);
    if (built === undefined) continue;
    outPackages.push(built.pkg);
    outChannels.push(...built.channels);
    outBundles.push(...built.bundles);
    for (const b of built.bundles) {
      const draft = pkg.bundles.get(b.name);
      if (draft !== undefined) {
        contents.set(`${pkg.name}\u0000${b.name}`, {
          pkg: pkg.name,
          name: b.name,
          content: draft.content,
        });
      }
    }
  }
  const index = new CatalogIndex({
    digest,
    packages: outPackages,
    channels: outChannels,
    bundles: outBundles,
  });
  return { index, content: new InMemoryCatalogContent(digest, contents), warnings: warnings.list };
}
