// Finishes a draft package into the index's package, channels and bundles: bundles in no
// channel dropped, the default channel checked, each bundle's APIs and dependencies assembled.
import { finishChannel } from './channel-graph.js';
import { compareText, type DraftBundle, type DraftPackage, type WarningSink } from './draft.js';
import {
  canonicalBundleProperties,
  type CatalogApi,
  type CatalogBundle,
  type CatalogChannel,
  type CatalogChannelEntry,
  type CatalogDependency,
  type CatalogPackage,
} from './model.js';
import { CatalogWarningCode as W } from './problems.js';

/** A package as the index holds it, with its channels and bundles. */
export interface FinishedPackage {
  readonly pkg: CatalogPackage;
  readonly channels: CatalogChannel[];
  readonly bundles: CatalogBundle[];
}
/** The finished package, or undefined (with a warning) when it has no usable channel. */
export function finishPackage(
  pkg: DraftPackage,
  warnings: WarningSink,
): FinishedPackage | undefined {
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
  const bundle: CatalogBundle = {
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
  // Most catalogs list properties as `opm render` writes them, which the fields rebuild; only a
  // list that differs is kept (it costs index bytes every resolver loads).
  const same = JSON.stringify(canonicalBundleProperties(bundle)) === JSON.stringify(draft.listed);
  return same ? bundle : { ...bundle, listedProperties: draft.listed };
}
