// Builds the catalog index from parsed objects. Pure: objects in, { index, content, warnings }
// out. Tolerant like a careful operator would be: irregular data is kept when it can still be
// used, dropped when it cannot, and every such decision is a warning with a stable code.
import semver from 'semver';
import type { z } from 'zod';
import { InMemoryCatalogContent, type BundleContent } from './bundle-content.js';
import { findCsvSummary } from './bundle-csv.js';
import { finishChannel } from './channel-graph.js';
import { summarizeCsvMetadata, type CsvSummary } from './csv-summary.js';
import { catalogDigest } from './digest.js';
import { compareText, WarningSink, type DraftBundle, type DraftPackage } from './draft.js';
import {
  BundleObjectPropertySchema,
  BundleObjectSchema,
  ChannelObjectSchema,
  DeprecationsObjectSchema,
  GvkPropertySchema,
  PackageObjectSchema,
  PackagePropertySchema,
  PackageRequiredPropertySchema,
} from './fbc-schema.js';
import type { CatalogObject } from './fbc-text.js';
import {
  CatalogIndex,
  derivedPropertyTypes,
  type CatalogApi,
  type CatalogBundle,
  type CatalogChannel,
  type CatalogChannelEntry,
  type CatalogDependency,
  type CatalogPackage,
  type CatalogProperty,
} from './model.js';
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

function issueText(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid';
  const path = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return `${path}${issue.message}`;
}

function nameOf(value: Readonly<Record<string, unknown>>): string | undefined {
  return typeof value['name'] === 'string' ? value['name'] : undefined;
}

function packageOf(value: Readonly<Record<string, unknown>>): string | undefined {
  return typeof value['package'] === 'string' ? value['package'] : undefined;
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

function addPackage(
  object: CatalogObject,
  packages: Map<string, DraftPackage>,
  warnings: WarningSink,
): void {
  const parsed = PackageObjectSchema.safeParse(object.value);
  if (!parsed.success) {
    const name = nameOf(object.value);
    warnings.add(W.ObjectInvalid, `olm.package is invalid (${issueText(parsed.error)}); dropped`, {
      ...(name === undefined ? {} : { package: name }),
      origin: object.origin,
    });
    return;
  }
  const p = parsed.data;
  const existing = packages.get(p.name);
  if (existing !== undefined) {
    warnings.add(
      W.PackageDuplicate,
      `package "${p.name}" is declared again (first at ${existing.origin}); this one is dropped`,
      { package: p.name, origin: object.origin },
    );
    return;
  }
  packages.set(p.name, {
    name: p.name,
    origin: object.origin,
    defaultChannel:
      p.defaultChannel === undefined || p.defaultChannel === '' ? null : p.defaultChannel,
    bundles: new Map(),
    channels: new Map(),
    deprecations: null,
    deprecation: null,
  });
}

/** Where a bundle's or a channel's warnings point. */
type MemberWhere = { package: string; origin: string } & ({ bundle: string } | { channel: string });

/**
 * The olm.bundle or olm.channel `object` with its package, when it is valid, its package is
 * known and its name is new in that package; otherwise undefined, with the warning that says why.
 */
function admitMember<T extends { package: string; name: string }>(
  object: CatalogObject,
  kind: 'bundle' | 'channel',
  schema: z.ZodType<T>,
  packages: ReadonlyMap<string, DraftPackage>,
  warnings: WarningSink,
): { member: T; pkg: DraftPackage; where: MemberWhere } | undefined {
  const parsed = schema.safeParse(object.value);
  const origin = object.origin;
  const named = (name: string): { bundle: string } | { channel: string } =>
    kind === 'bundle' ? { bundle: name } : { channel: name };
  if (!parsed.success) {
    const name = nameOf(object.value);
    const pkgName = packageOf(object.value);
    warnings.add(W.ObjectInvalid, `olm.${kind} is invalid (${issueText(parsed.error)}); dropped`, {
      ...(pkgName === undefined ? {} : { package: pkgName }),
      ...(name === undefined ? {} : named(name)),
      origin,
    });
    return undefined;
  }
  const member = parsed.data;
  const where: MemberWhere = { package: member.package, ...named(member.name), origin };
  const pkg = packages.get(member.package);
  if (pkg === undefined) {
    warnings.add(
      W.PackageUnknown,
      `${kind} "${member.name}" belongs to package "${member.package}", which has no olm.package object; dropped`,
      where,
    );
    return undefined;
  }
  const existing = (kind === 'bundle' ? pkg.bundles : pkg.channels).get(member.name);
  if (existing !== undefined) {
    warnings.add(
      kind === 'bundle' ? W.BundleDuplicate : W.ChannelDuplicate,
      `${kind} "${member.name}" is declared again in package "${member.package}" (first at ${existing.origin}); this one is dropped`,
      where,
    );
    return undefined;
  }
  return { member, pkg, where };
}

function addBundle(
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
    content: { objects, csvMetadata: csvMetadata ?? null, relatedImages },
    csv,
    channels: [],
    deprecation: null,
  });
}

function addChannel(
  object: CatalogObject,
  packages: Map<string, DraftPackage>,
  warnings: WarningSink,
): void {
  const admitted = admitMember(object, 'channel', ChannelObjectSchema, packages, warnings);
  if (admitted === undefined) return;
  const { member: c, pkg, where } = admitted;
  const origin = object.origin;
  const entries: CatalogChannelEntry[] = [];
  const names = new Set<string>();
  for (const e of c.entries) {
    if (names.has(e.name)) {
      warnings.add(
        W.ChannelEntryDuplicate,
        `channel "${c.name}" lists bundle "${e.name}" more than once; the repeat is dropped`,
        { ...where, bundle: e.name },
      );
      continue;
    }
    if (!pkg.bundles.has(e.name)) {
      warnings.add(
        W.ChannelEntryUnknownBundle,
        `channel "${c.name}" lists bundle "${e.name}", which package "${c.package}" does not have (or which was dropped); entry dropped`,
        { ...where, bundle: e.name },
      );
      continue;
    }
    names.add(e.name);
    entries.push({
      name: e.name,
      replaces: e.replaces === undefined || e.replaces === '' ? null : e.replaces,
      skips: (e.skips ?? []).filter((s) => s !== ''),
      skipRange: e.skipRange === undefined || e.skipRange === '' ? null : e.skipRange,
    });
  }
  if (entries.length === 0) {
    warnings.add(W.ChannelEmpty, `channel "${c.name}" has no usable entries; dropped`, where);
    return;
  }
  pkg.channels.set(c.name, { name: c.name, origin, entries, deprecation: null });
}

function addDeprecations(
  object: CatalogObject,
  packages: Map<string, DraftPackage>,
  warnings: WarningSink,
): void {
  const parsed = DeprecationsObjectSchema.safeParse(object.value);
  const origin = object.origin;
  if (!parsed.success) {
    const pkgName = packageOf(object.value);
    warnings.add(
      W.ObjectInvalid,
      `olm.deprecations is invalid (${issueText(parsed.error)}); dropped`,
      { ...(pkgName === undefined ? {} : { package: pkgName }), origin },
    );
    return;
  }
  const d = parsed.data;
  const pkg = packages.get(d.package);
  if (pkg === undefined) {
    warnings.add(
      W.PackageUnknown,
      `olm.deprecations names package "${d.package}", which has no olm.package object; dropped`,
      { package: d.package, origin },
    );
    return;
  }
  if (pkg.deprecations !== null) {
    warnings.add(
      W.DeprecationDuplicate,
      `package "${d.package}" has more than one olm.deprecations object (first at ${pkg.deprecations.origin}); this one is dropped`,
      { package: d.package, origin },
    );
    return;
  }
  pkg.deprecations = { object: d, origin };
  for (const entry of d.entries) {
    const ref = entry.reference;
    const refName = ref.name ?? '';
    if (ref.schema === 'olm.package') {
      pkg.deprecation = entry.message;
      continue;
    }
    const target =
      ref.schema === 'olm.channel' ? pkg.channels.get(refName) : pkg.bundles.get(refName);
    if (target === undefined) {
      const what = ref.schema === 'olm.channel' ? 'channel' : 'bundle';
      warnings.add(
        W.DeprecationUnknownReference,
        `olm.deprecations names ${what} "${refName}", which package "${d.package}" does not have; ignored`,
        { package: d.package, origin },
      );
      continue;
    }
    target.deprecation = entry.message;
  }
}

interface FinishedPackage {
  readonly pkg: CatalogPackage;
  readonly channels: CatalogChannel[];
  readonly bundles: CatalogBundle[];
}

function finishPackage(pkg: DraftPackage, warnings: WarningSink): FinishedPackage | undefined {
  const where = { package: pkg.name, origin: pkg.origin };
  for (const channel of pkg.channels.values()) {
    for (const entry of channel.entries) pkg.bundles.get(entry.name)?.channels.push(channel.name);
  }
  for (const bundle of [...pkg.bundles.values()]) {
    if (bundle.channels.length > 0) continue;
    warnings.add(
      W.BundleNotInChannel,
      `bundle "${bundle.name}" is not an entry of any channel of package "${pkg.name}", so no subscription can reach it; dropped`,
      { package: pkg.name, bundle: bundle.name, origin: bundle.origin },
    );
    pkg.bundles.delete(bundle.name);
  }
  if (pkg.channels.size === 0) {
    warnings.add(
      W.PackageWithoutChannels,
      `package "${pkg.name}" has no usable channel; dropped`,
      where,
    );
    return undefined;
  }
  let defaultChannel = pkg.defaultChannel;
  if (defaultChannel === null) {
    warnings.add(
      W.DefaultChannelMissing,
      `package "${pkg.name}" has no defaultChannel; subscriptions must name a channel`,
      where,
    );
  } else if (!pkg.channels.has(defaultChannel)) {
    warnings.add(
      W.DefaultChannelMissing,
      `package "${pkg.name}" names default channel "${defaultChannel}", which it does not have; subscriptions must name a channel`,
      where,
    );
    defaultChannel = null;
  }
  duplicateVersions(pkg, warnings);

  const rangeMatches = new Map<string, string[] | null>();
  const channels: CatalogChannel[] = [];
  for (const name of [...pkg.channels.keys()].sort(compareText)) {
    const draft = pkg.channels.get(name);
    if (draft !== undefined) channels.push(finishChannel(pkg, draft, rangeMatches, warnings));
  }

  // Each bundle's entries, in channel-name order (channels are already sorted).
  const entriesOf = new Map<string, CatalogChannelEntry[]>();
  for (const channel of channels) {
    for (const entry of channel.entries) {
      const list = entriesOf.get(entry.name);
      if (list === undefined) entriesOf.set(entry.name, [entry]);
      else list.push(entry);
    }
  }
  const bundles: CatalogBundle[] = [];
  for (const name of [...pkg.bundles.keys()].sort(compareText)) {
    const draft = pkg.bundles.get(name);
    if (draft !== undefined) bundles.push(finishBundle(pkg, draft, entriesOf.get(name) ?? []));
  }
  return {
    pkg: {
      name: pkg.name,
      defaultChannel,
      channels: channels.map((c) => c.name),
      deprecation: pkg.deprecation,
    },
    channels,
    bundles,
  };
}

function duplicateVersions(pkg: DraftPackage, warnings: WarningSink): void {
  const byVersion = new Map<string, string[]>();
  for (const b of pkg.bundles.values()) {
    const v = b.parsed?.version ?? b.version;
    const list = byVersion.get(v);
    if (list === undefined) byVersion.set(v, [b.name]);
    else list.push(b.name);
  }
  for (const [version, names] of byVersion) {
    if (names.length < 2) continue;
    warnings.add(
      W.BundleVersionDuplicate,
      `bundles ${names.sort(compareText).join(', ')} of package "${pkg.name}" share version ${version}; upgrades between them follow only replaces/skips`,
      { package: pkg.name, origin: pkg.origin },
    );
  }
}

function apiKey(api: { group: string; version: string; kind: string }): string {
  return `${api.group}/${api.version}/${api.kind}`;
}

function finishBundle(
  pkg: DraftPackage,
  draft: DraftBundle,
  entries: readonly CatalogChannelEntry[],
): CatalogBundle {
  const csv = draft.csv;
  const provided = new Map<string, CatalogApi>();
  const plurals = new Map((csv?.ownedApis ?? []).map((a) => [apiKey(a), a.plural]));
  const required = new Map<string, CatalogApi>();
  const dependencies: CatalogDependency[] = [];
  for (const p of draft.derived) {
    if (p.type === 'olm.gvk') {
      const v = p.value as { group: string; version: string; kind: string };
      const k = apiKey(v);
      if (!provided.has(k)) {
        provided.set(k, {
          group: v.group,
          version: v.version,
          kind: v.kind,
          plural: plurals.get(k) ?? null,
        });
      }
    } else if (p.type === 'olm.gvk.required') {
      const v = p.value as { group: string; version: string; kind: string };
      const k = apiKey(v);
      if (!required.has(k))
        required.set(k, { group: v.group, version: v.version, kind: v.kind, plural: null });
      dependencies.push({ type: 'olm.gvk', group: v.group, version: v.version, kind: v.kind });
    } else if (p.type === 'olm.package.required') {
      const v = p.value as { packageName: string; versionRange: string };
      dependencies.push({
        type: 'olm.package',
        packageName: v.packageName,
        versionRange: v.versionRange,
      });
    } else if (p.type === 'olm.constraint') {
      dependencies.push({ type: 'olm.constraint', value: p.value });
    }
  }
  for (const api of csv?.ownedApis ?? [])
    if (!provided.has(apiKey(api))) provided.set(apiKey(api), api);
  for (const api of csv?.requiredApis ?? []) {
    const k = apiKey(api);
    const known = required.get(k);
    if (known === undefined || (known.plural === null && api.plural !== null)) required.set(k, api);
  }
  const skips = new Set(csv?.skips ?? []);
  for (const e of entries) for (const s of e.skips) skips.add(s);
  const entrySkipRange = entries.find((e) => e.skipRange !== null)?.skipRange ?? null;
  return {
    name: draft.name,
    package: pkg.name,
    version: draft.version,
    semver: draft.parsed?.version ?? null,
    image: draft.image,
    channels: draft.channels.sort(compareText),
    replaces: entries.find((e) => e.replaces !== null)?.replaces ?? csv?.replaces ?? null,
    skips: [...skips].sort(compareText),
    skipRange: entrySkipRange ?? csv?.skipRange ?? null,
    properties: draft.properties,
    providedApis: [...provided.values()],
    requiredApis: [...required.values()],
    dependencies,
    installModes: csv?.installModes ?? null,
    displayName: csv?.displayName ?? null,
    provider: csv?.provider ?? null,
    deprecation: draft.deprecation,
  };
}
