// The catalog index: the immutable, compact model resolvers cache and JetStream stores.
// Plain readonly data plus lookup tables built once; bundle manifests live elsewhere
// (see bundle-content.ts) so the hot structure stays small.
import semver from 'semver';

/** A group/version/kind an operator provides or needs; plural is known when a CSV names it. */
export interface CatalogApi {
  /** API group ('' for the core group). */
  readonly group: string;
  /** API version, e.g. v1beta1. */
  readonly version: string;
  /** Kind, e.g. EtcdCluster. */
  readonly kind: string;
  /** Resource plural, e.g. etcdclusters, or null when no CSV says it. */
  readonly plural: string | null;
}

/** A bundle's dependency, as the olm.gvk.required / olm.package.required / olm.constraint properties state it. */
export type CatalogDependency =
  | {
      readonly type: 'olm.gvk';
      readonly group: string;
      readonly version: string;
      readonly kind: string;
    }
  | { readonly type: 'olm.package'; readonly packageName: string; readonly versionRange: string }
  | { readonly type: 'olm.constraint'; readonly value: unknown };

/** A bundle property other than manifests (olm.bundle.object, olm.csv.metadata stay in the content). */
export interface CatalogProperty {
  /** Property type, e.g. olm.gvk, olm.maxOpenShiftVersion. */
  readonly type: string;
  /** Its value as in the catalog. */
  readonly value: unknown;
}

/** One install mode of a CSV. */
export interface CatalogInstallMode {
  /** OwnNamespace, SingleNamespace, MultiNamespace or AllNamespaces (kept as written). */
  readonly type: string;
  /** Whether the operator supports it. */
  readonly supported: boolean;
}

/** A package: the unit a Subscription names. */
export interface CatalogPackage {
  /** Package name. */
  readonly name: string;
  /** Default channel, or null when the catalog gives none usable. */
  readonly defaultChannel: string | null;
  /** Channel names, sorted. */
  readonly channels: readonly string[];
  /** Deprecation message from olm.deprecations, or null. */
  readonly deprecation: string | null;
}

/** One entry of a channel: a bundle and the edges it declares. */
export interface CatalogChannelEntry {
  /** Bundle (CSV) name. */
  readonly name: string;
  /** The bundle this one replaces, or null. */
  readonly replaces: string | null;
  /** Bundles this one skips. */
  readonly skips: readonly string[];
  /** Versions this one can replace, as a semver range, or null. */
  readonly skipRange: string | null;
}

/** How an upgrade edge arises. */
export type UpgradeVia = 'replaces' | 'skips' | 'skipRange';

/** An upgrade edge in a channel: installed bundle `from` may be replaced by entry `to`. */
export interface UpgradeEdge {
  /** Name of the bundle being replaced (may be absent from the catalog for replaces/skips). */
  readonly from: string;
  /** Name of the channel entry that replaces it. */
  readonly to: string;
  /** The first rule that yields the edge, in the order replaces, skips, skipRange. */
  readonly via: UpgradeVia;
}

/** A channel of a package. */
export interface CatalogChannel {
  /** Package name. */
  readonly package: string;
  /** Channel name. */
  readonly name: string;
  /** The head bundle's name, or null when the graph has none. */
  readonly head: string | null;
  /** Entries, head first then along the replaces chain; other entries after, newest first. */
  readonly entries: readonly CatalogChannelEntry[];
  /** Every upgrade edge between entries and the package's bundles (self-edges excluded). */
  readonly edges: readonly UpgradeEdge[];
  /** Deprecation message from olm.deprecations, or null. */
  readonly deprecation: string | null;
}

/** A bundle (one CSV version of a package), without its manifests. */
export interface CatalogBundle {
  /** Bundle name = CSV name. */
  readonly name: string;
  /** Package name. */
  readonly package: string;
  /** Version as written in the olm.package property. */
  readonly version: string;
  /** Normalized semver of `version`, or null when it does not parse. */
  readonly semver: string | null;
  /** Bundle image reference ('' when the bundle is given only by its manifests). */
  readonly image: string;
  /** Channels listing this bundle, sorted. */
  readonly channels: readonly string[];
  /**
   * What the bundle replaces: the first channel entry's replaces (channels in name order; the
   * catalog's graph wins over the CSV, as in operator-registry), else the CSV's spec.replaces.
   */
  readonly replaces: string | null;
  /** Union of the CSV's spec.skips and the channel entries' skips. */
  readonly skips: readonly string[];
  /** The channel entry's skipRange, else the CSV's olm.skipRange annotation. */
  readonly skipRange: string | null;
  /**
   * Properties other than those turned into fields (olm.package → version; olm.gvk →
   * providedApis; olm.gvk.required, olm.package.required, olm.constraint → requiredApis and
   * dependencies) and the manifests (olm.bundle.object, olm.csv.metadata → bundle content).
   * allBundleProperties() gives the full list back.
   */
  readonly properties: readonly CatalogProperty[];
  /** APIs the bundle provides (olm.gvk, plus owned CRDs/API services of its CSV). */
  readonly providedApis: readonly CatalogApi[];
  /** APIs the bundle needs (olm.gvk.required, plus required CRDs/API services of its CSV). */
  readonly requiredApis: readonly CatalogApi[];
  /** Dependencies stated as properties. */
  readonly dependencies: readonly CatalogDependency[];
  /** The CSV's install modes, or null when the catalog has no CSV for it. */
  readonly installModes: readonly CatalogInstallMode[] | null;
  /** The CSV's spec.displayName, or null. */
  readonly displayName: string | null;
  /** The CSV's spec.provider.name, or null. */
  readonly provider: string | null;
  /** Deprecation message from olm.deprecations, or null. */
  readonly deprecation: string | null;
  /**
   * The catalog's own list of properties (without manifests), kept only when it differs from
   * what allBundleProperties() rebuilds from the fields (another order, duplicates, an olm.gvk
   * the CSV owns but the catalog does not list): upstream records the list as the catalog has it.
   */
  readonly listedProperties?: readonly CatalogProperty[];
}

/** The data an index is made of (what serialization writes). */
export interface CatalogIndexData {
  /** sha256 content digest of the catalog the index was built from. */
  readonly digest: string;
  /** Packages sorted by name. */
  readonly packages: readonly CatalogPackage[];
  /** Channels sorted by package then name. */
  readonly channels: readonly CatalogChannel[];
  /** Bundles sorted by package then name. */
  readonly bundles: readonly CatalogBundle[];
}

/** Names an installed bundle for upgrade queries; version is needed only for bundles not in the catalog. */
export interface InstalledBundle {
  /** Installed CSV name. */
  readonly name: string;
  /** Installed CSV version, used to match skipRanges when the bundle is not in this catalog. */
  readonly version?: string;
}

/** An upgrade candidate: a channel entry and the rule that makes it one. */
export interface UpgradeCandidate {
  /** The channel entry's bundle. */
  readonly bundle: CatalogBundle;
  /** Which rule yields the edge. */
  readonly via: UpgradeVia;
}

/** Property types the index keeps as bundle fields rather than in `properties`. */
export const derivedPropertyTypes: ReadonlySet<string> = new Set([
  'olm.package',
  'olm.gvk',
  'olm.gvk.required',
  'olm.package.required',
  'olm.constraint',
]);

/** A bundle's properties as a catalog lists them (without manifests), rebuilt from its fields. */
export function allBundleProperties(bundle: CatalogBundle): CatalogProperty[] {
  if (bundle.listedProperties !== undefined) return [...bundle.listedProperties];
  return canonicalBundleProperties(bundle);
}

/** A bundle's properties rebuilt from its fields, in the order `opm render` writes them. */
export function canonicalBundleProperties(bundle: CatalogBundle): CatalogProperty[] {
  // olm.gvk before olm.package, the order `opm render` writes and upstream then copies into
  // the CSV's operatorframework.io/properties annotation.
  const out: CatalogProperty[] = bundle.providedApis.map((api) => ({
    type: 'olm.gvk',
    value: { group: api.group, kind: api.kind, version: api.version },
  }));
  out.push({
    type: 'olm.package',
    value: { packageName: bundle.package, version: bundle.version },
  });
  for (const d of bundle.dependencies) {
    if (d.type === 'olm.gvk') {
      out.push({
        type: 'olm.gvk.required',
        value: { group: d.group, kind: d.kind, version: d.version },
      });
    } else if (d.type === 'olm.package') {
      out.push({
        type: 'olm.package.required',
        value: { packageName: d.packageName, versionRange: d.versionRange },
      });
    } else out.push({ type: 'olm.constraint', value: d.value });
  }
  return [...out, ...bundle.properties];
}

/**
 * The upgrade edges of a channel, in a fixed order (replaces, then skips, then skipRange; each
 * in entry order), one per (from, to), without self-edges. `rangeFroms` maps an entry to the
 * package's bundles its skipRange contains.
 */
export function channelEdges(
  entries: readonly CatalogChannelEntry[],
  rangeFroms: ReadonlyMap<string, readonly string[]>,
): UpgradeEdge[] {
  // Entries name each bundle once and rangeFroms lists each bundle once, so duplicates can only
  // come from one entry's own replaces/skips: checking those avoids a set of all edges.
  const edges: UpgradeEdge[] = [];
  for (const e of entries) {
    if (e.replaces !== null && e.replaces !== e.name) {
      edges.push({ from: e.replaces, to: e.name, via: 'replaces' });
    }
  }
  for (const e of entries) {
    e.skips.forEach((s, i) => {
      if (s === e.name || s === e.replaces || e.skips.indexOf(s) !== i) return;
      edges.push({ from: s, to: e.name, via: 'skips' });
    });
  }
  for (const e of entries) {
    for (const from of rangeFroms.get(e.name) ?? []) {
      if (from === e.name || from === e.replaces || e.skips.includes(from)) continue;
      edges.push({ from, to: e.name, via: 'skipRange' });
    }
  }
  return edges;
}

const noBundles: readonly CatalogBundle[] = Object.freeze([]);
const noCandidates: readonly UpgradeCandidate[] = Object.freeze([]);

function key(a: string, b: string): string {
  return `${a}\u0000${b}`;
}

interface ChannelTables {
  readonly channel: CatalogChannel;
  readonly edgesFrom: Map<string, UpgradeEdge[]>;
  // Parsed lazily, only for installed bundles that are not in the catalog.
  ranges?: { readonly entry: CatalogChannelEntry; readonly range: semver.Range }[];
}

/** An immutable catalog index with the lookups resolvers need. */
export class CatalogIndex {
  /** Content digest of the catalog this index was built from. */
  readonly digest: string;
  /** Packages sorted by name. */
  readonly packages: readonly CatalogPackage[];
  /** Channels sorted by package then name. */
  readonly channels: readonly CatalogChannel[];
  /** Bundles sorted by package then name. */
  readonly bundles: readonly CatalogBundle[];

  readonly #packages = new Map<string, CatalogPackage>();
  readonly #channels = new Map<string, ChannelTables>();
  readonly #bundles = new Map<string, CatalogBundle>();
  readonly #bundlesByName = new Map<string, CatalogBundle[]>();
  // Keyed by kind alone (few bundles share a kind): cheaper to build on every load than a
  // key per group/version/kind, and a lookup filters the handful of candidates.
  readonly #providersByKind = new Map<string, CatalogBundle[]>();
  readonly #replacers = new Map<
    string,
    { channel: CatalogChannel; entry: CatalogChannelEntry }[]
  >();

  constructor(data: CatalogIndexData) {
    // Shallow freezes of every record make accidental writes by a consumer fail loudly; nested
    // values are shared between records and typed readonly.
    Object.freeze(data.packages);
    Object.freeze(data.channels);
    Object.freeze(data.bundles);
    for (const p of data.packages) Object.freeze(p);
    for (const c of data.channels) {
      Object.freeze(c);
      Object.freeze(c.entries);
      Object.freeze(c.edges);
    }
    for (const b of data.bundles) Object.freeze(b);
    this.digest = data.digest;
    this.packages = data.packages;
    this.channels = data.channels;
    this.bundles = data.bundles;
    for (const p of data.packages) this.#packages.set(p.name, p);
    for (const c of data.channels) {
      const edgesFrom = new Map<string, UpgradeEdge[]>();
      for (const edge of c.edges) {
        const list = edgesFrom.get(edge.from);
        if (list === undefined) edgesFrom.set(edge.from, [edge]);
        else list.push(edge);
      }
      this.#channels.set(key(c.package, c.name), { channel: c, edgesFrom });
      for (const entry of c.entries) {
        if (entry.replaces === null) continue;
        const list = this.#replacers.get(entry.replaces);
        if (list === undefined) this.#replacers.set(entry.replaces, [{ channel: c, entry }]);
        else list.push({ channel: c, entry });
      }
    }
    for (const b of data.bundles) {
      this.#bundles.set(key(b.package, b.name), b);
      const named = this.#bundlesByName.get(b.name);
      if (named === undefined) this.#bundlesByName.set(b.name, [b]);
      else named.push(b);
      for (const api of b.providedApis) {
        const list = this.#providersByKind.get(api.kind);
        if (list === undefined) this.#providersByKind.set(api.kind, [b]);
        else if (list[list.length - 1] !== b) list.push(b);
      }
    }
  }

  /** The package named `name`, if any. */
  getPackage(name: string): CatalogPackage | undefined {
    return this.#packages.get(name);
  }

  /** Channel `channel` of package `pkg`, if any. */
  getChannel(pkg: string, channel: string): CatalogChannel | undefined {
    return this.#channels.get(key(pkg, channel))?.channel;
  }

  /** The channels of a package, sorted by name. */
  channelsOf(pkg: string): readonly CatalogChannel[] {
    const p = this.#packages.get(pkg);
    if (p === undefined) return [];
    return p.channels.flatMap((c) => this.#channels.get(key(pkg, c))?.channel ?? []);
  }

  /** Bundle `name` of package `pkg`, if any. */
  getBundle(pkg: string, name: string): CatalogBundle | undefined {
    return this.#bundles.get(key(pkg, name));
  }

  /** Every bundle with this CSV name (usually one; several packages may reuse a name). */
  bundlesNamed(name: string): readonly CatalogBundle[] {
    return this.#bundlesByName.get(name) ?? noBundles;
  }

  /** The head bundle of a channel, if the channel exists and has one. */
  channelHead(pkg: string, channel: string): CatalogBundle | undefined {
    const head = this.getChannel(pkg, channel)?.head;
    return head === null || head === undefined ? undefined : this.getBundle(pkg, head);
  }

  /** Head of the package's default channel, if any. */
  defaultHead(pkg: string): CatalogBundle | undefined {
    const channel = this.getPackage(pkg)?.defaultChannel;
    return channel === null || channel === undefined ? undefined : this.channelHead(pkg, channel);
  }

  /** Bundles that provide group/version/kind, in package then name order. */
  providersOf(group: string, version: string, kind: string): readonly CatalogBundle[] {
    const candidates = this.#providersByKind.get(kind);
    if (candidates === undefined) return noBundles;
    return candidates.filter((b) =>
      b.providedApis.some((a) => a.kind === kind && a.group === group && a.version === version),
    );
  }

  /** Channel entries (any package) whose replaces names `csvName` (gRPC GetChannelEntriesThatReplace). */
  entriesReplacing(
    csvName: string,
  ): readonly { readonly channel: CatalogChannel; readonly entry: CatalogChannelEntry }[] {
    return this.#replacers.get(csvName) ?? [];
  }

  /**
   * Entries of channel `channel` of `pkg` that may upgrade `installed`: those that replace or
   * skip it by name, or whose skipRange contains its version. Precomputed for bundles of the
   * catalog; for others the version (if given) is matched against the channel's skipRanges.
   */
  upgradesFrom(
    pkg: string,
    channel: string,
    installed: InstalledBundle,
  ): readonly UpgradeCandidate[] {
    const tables = this.#channels.get(key(pkg, channel));
    if (tables === undefined) return noCandidates;
    const out: UpgradeCandidate[] = [];
    const seen = new Set<string>();
    for (const edge of tables.edgesFrom.get(installed.name) ?? []) {
      const bundle = this.getBundle(pkg, edge.to);
      if (bundle === undefined || seen.has(edge.to)) continue;
      seen.add(edge.to);
      out.push({ bundle, via: edge.via });
    }
    const known = this.getBundle(pkg, installed.name) !== undefined;
    const version = installed.version === undefined ? null : semver.parse(installed.version);
    if (!known && version !== null) {
      tables.ranges ??= channelRanges(tables.channel);
      for (const { entry, range } of tables.ranges) {
        if (seen.has(entry.name) || entry.name === installed.name) continue;
        if (!range.test(version)) continue;
        const bundle = this.getBundle(pkg, entry.name);
        if (bundle === undefined) continue;
        seen.add(entry.name);
        out.push({ bundle, via: 'skipRange' });
      }
    }
    return out;
  }
}

/** Options for semver ranges as OLM matches skipRanges (prereleases included, like blang/semver). */
export const skipRangeOptions = { includePrerelease: true, loose: false } as const;

function channelRanges(
  channel: CatalogChannel,
): { readonly entry: CatalogChannelEntry; readonly range: semver.Range }[] {
  const out: { entry: CatalogChannelEntry; range: semver.Range }[] = [];
  for (const entry of channel.entries) {
    if (entry.skipRange === null) continue;
    try {
      out.push({ entry, range: new semver.Range(entry.skipRange, skipRangeOptions) });
    } catch {
      // Invalid ranges were reported when the index was built; they match nothing.
    }
  }
  return out;
}
