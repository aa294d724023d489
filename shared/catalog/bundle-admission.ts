// Admits parsed olm.bundle objects into their draft packages: properties sorted into kept and
// derived ones, the version and CSV found, unusable bundles dropped with a warning.
import semver from 'semver';
import type { z } from 'zod';
import { findCsvSummary } from './bundle-csv.js';
import { summarizeCsvMetadata, type CsvSummary } from './csv-summary.js';
import type { DraftPackage, WarningSink } from './draft.js';
import {
  BundleObjectPropertySchema,
  BundleObjectSchema,
  GvkPropertySchema,
  PackagePropertySchema,
  PackageRequiredPropertySchema,
} from './fbc-schema.js';
import type { CatalogObject } from './fbc-text.js';
import { derivedPropertyTypes, type CatalogProperty } from './model.js';
import { admitMember, issueText } from './object-admission.js';
import { CatalogWarningCode as W } from './problems.js';

/** Adds an olm.bundle object as a draft bundle of its package, unless it cannot be used. */
export function addBundle(
  object: CatalogObject,
  packages: Map<string, DraftPackage>,
  warnings: WarningSink,
): void {
  const admitted = admitMember(object, 'bundle', BundleObjectSchema, packages, warnings);
  if (admitted === undefined) return;
  const { member: b, pkg, where } = admitted;
  const origin = object.origin;

  const properties: CatalogProperty[] = [];
  const objects: string[] = [];
  let csvMetadata: unknown = undefined;
  const packageProps: z.infer<typeof PackagePropertySchema>[] = [];
  // Properties the index turns into fields (providedApis, requiredApis, dependencies).
  const derived: CatalogProperty[] = [];
  const listed: CatalogProperty[] = [];
  for (const property of b.properties ?? []) {
    const schema =
      property.type === 'olm.gvk' || property.type === 'olm.gvk.required'
        ? GvkPropertySchema
        : property.type === 'olm.package'
          ? PackagePropertySchema
          : property.type === 'olm.package.required'
            ? PackageRequiredPropertySchema
            : property.type === 'olm.bundle.object'
              ? BundleObjectPropertySchema
              : undefined;
    if (schema !== undefined) {
      const value = schema.safeParse(property.value);
      if (!value.success) {
        warnings.add(
          W.PropertyInvalid,
          `property ${property.type} is invalid (${issueText(value.error)}); dropped`,
          where,
        );
        continue;
      }
    }
    if (property.type === 'olm.bundle.object') {
      objects.push((property.value as { data: string }).data);
    } else if (property.type === 'olm.csv.metadata') {
      csvMetadata = property.value;
    } else {
      listed.push({ type: property.type, value: property.value });
      if (property.type === 'olm.package') {
        packageProps.push(property.value as z.infer<typeof PackagePropertySchema>);
      } else if (derivedPropertyTypes.has(property.type)) {
        derived.push({ type: property.type, value: property.value });
      }
      if (!derivedPropertyTypes.has(property.type)) {
        properties.push({ type: property.type, value: property.value });
      }
    }
  }

  if (packageProps.length === 0) {
    warnings.add(
      W.BundlePackagePropertyMissing,
      `bundle "${b.name}" has no olm.package property, so its version is unknown; dropped`,
      where,
    );
    return;
  }
  let packageProp = packageProps[0];
  if (packageProps.length > 1) {
    packageProp = packageProps.find((p) => p.packageName === b.package) ?? packageProp;
    warnings.add(
      W.BundlePackagePropertyMultiple,
      `bundle "${b.name}" has ${packageProps.length} olm.package properties (must be exactly one); using version ${packageProp?.version ?? ''}`,
      where,
    );
  }
  if (packageProp === undefined) return;
  if (packageProp.packageName !== b.package) {
    warnings.add(
      W.BundlePackageMismatch,
      `bundle "${b.name}" is in package "${b.package}" but its olm.package property says "${packageProp.packageName}"; using "${b.package}"`,
      where,
    );
  }
  const image = b.image ?? '';
  if (image === '' && objects.length === 0) {
    warnings.add(
      W.BundleImageMissing,
      `bundle "${b.name}" has neither an image nor olm.bundle.object manifests, so it cannot be installed; dropped`,
      where,
    );
    return;
  }
  const version = packageProp.version;
  const parsedVersion = semver.parse(version);
  if (parsedVersion === null) {
    warnings.add(
      W.BundleVersionInvalid,
      `bundle "${b.name}" has version "${version}", which is not semver; kept, but no skipRange can match it`,
      where,
    );
  }

  let csv: CsvSummary | null =
    findCsvSummary(objects, (position, detail) =>
      warnings.add(
        W.BundleObjectInvalid,
        `olm.bundle.object #${position} cannot be decoded (${detail}); it is left out`,
        where,
      ),
    ) ?? null;
  if (csv === null && csvMetadata !== undefined) csv = summarizeCsvMetadata(csvMetadata);
  if (csv === null) {
    warnings.add(
      W.BundleCsvMissing,
      `bundle "${b.name}" has no ClusterServiceVersion (olm.bundle.object) nor olm.csv.metadata; its install modes are unknown`,
      where,
    );
  }

  const relatedImages = (b.relatedImages ?? []).map((r) => ({
    name: r.name ?? '',
    image: r.image,
  }));
  pkg.bundles.set(b.name, {
    name: b.name,
    pkg: b.package,
    origin,
    version,
    parsed: parsedVersion,
    image,
    properties,
    derived,
    listed,
    content: { objects, csvMetadata: csvMetadata ?? null, relatedImages },
    csv,
    channels: [],
    deprecation: null,
  });
}
