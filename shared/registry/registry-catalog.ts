// What an operator-registry server answers, computed from the catalog model: pure lookups over
// the index, the bundle content and each bundle's properties as the catalog wrote them. The
// gRPC server (./server.ts) only moves these answers onto the wire.
//
// Behaviour follows operator-registry's File-Based Catalog server: the same bundle fields, the
// same "not found" messages, GetBundle without replaces/skips, ListBundles once per channel
// entry sorted by channel, package and name, without manifests for bundles that have an image.
import {
  allBundleProperties,
  buildCatalogIndex,
  type CatalogBundle,
  type CatalogChannel,
  type CatalogChannelEntry,
  type CatalogContent,
  type CatalogIndex,
  type CatalogObject,
  type CatalogWarning,
} from '../catalog/index.js';
import { bundleManifestsJson, type PackageFacts } from './manifests.js';
import type {
  ApiBundle,
  ApiChannelEntry,
  ApiDependency,
  ApiGroupVersionKind,
  ApiPackage,
  ApiProperty,
} from './protocol.js';

/** A lookup that names something the catalog does not have (gRPC NOT_FOUND). */
export class RegistryNotFoundError extends Error {
  override readonly name = 'RegistryNotFoundError';
}

// Go's %q, for messages worded as upstream's.
const q = (text: string): string => JSON.stringify(text);

/** The channel-independent part of an api.Bundle, computed once per bundle. */
interface BundleBase {
  readonly bundle: CatalogBundle;
  readonly providedApis: readonly ApiGroupVersionKind[];
  readonly requiredApis: readonly ApiGroupVersionKind[];
  readonly dependencies: readonly ApiDependency[];
  readonly properties: readonly ApiProperty[];
}

interface RawProperty {
  readonly type: string;
  readonly value: unknown;
}

function key(...parts: string[]): string {
  return parts.join('\u0000');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function gvkOf(value: unknown): { group: string; version: string; kind: string } | undefined {
  if (!isRecord(value)) return undefined;
  const group = str(value['group']);
  const version = str(value['version']);
  const kind = str(value['kind']);
  if (group === undefined || version === undefined || kind === undefined) return undefined;
  return { group, version, kind };
}

function rawProperties(value: Readonly<Record<string, unknown>>): RawProperty[] {
  const list = value['properties'];
  if (!Array.isArray(list)) return [];
  const out: RawProperty[] = [];
  for (const p of list as unknown[]) {
    if (isRecord(p) && typeof p['type'] === 'string')
      out.push({ type: p['type'], value: p['value'] });
  }
  return out;
}

/** The registry's view of one catalog. Immutable once built. */
export class RegistryCatalog {
  /** The catalog index the answers come from. */
  readonly index: CatalogIndex;
  readonly #content: CatalogContent;
  readonly #packageFacts: ReadonlyMap<string, PackageFacts>;
  readonly #bases = new Map<string, BundleBase>();
  #replacing: Map<string, ApiChannelEntry[]> | undefined;

  /**
   * `properties` gives each bundle's properties as the catalog wrote them (keyed by package and
   * bundle name); bundles it lacks are described from the index.
   */
  constructor(
    index: CatalogIndex,
    content: CatalogContent,
    properties: ReadonlyMap<string, readonly RawProperty[]>,
    packageFacts: ReadonlyMap<string, PackageFacts>,
  ) {
    this.index = index;
    this.#content = content;
    this.#packageFacts = packageFacts;
    for (const b of index.bundles) {
      const k = key(b.package, b.name);
      this.#bases.set(k, bundleBase(b, properties.get(k) ?? allBundleProperties(b)));
    }
  }

  /** Builds the index of parsed catalog objects and the registry view over it. */
  static fromObjects(objects: readonly CatalogObject[]): {
    catalog: RegistryCatalog;
    warnings: readonly CatalogWarning[];
  } {
    const { index, content, warnings } = buildCatalogIndex(objects);
    const properties = new Map<string, RawProperty[]>();
    const facts = new Map<string, PackageFacts>();
    for (const o of objects) {
      const v = o.value;
      if (o.schema === 'olm.bundle') {
        const name = str(v['name']);
        const pkg = str(v['package']);
        if (name === undefined || pkg === undefined) continue;
        // First wins, as in the index.
        const k = key(pkg, name);
        if (!properties.has(k)) properties.set(k, rawProperties(v));
      } else if (o.schema === 'olm.package') {
        const name = str(v['name']);
        if (name === undefined || facts.has(name)) continue;
        const icon = v['icon'];
        const base64data = isRecord(icon) ? str(icon['base64data']) : undefined;
        const mediatype = isRecord(icon) ? str(icon['mediatype']) : undefined;
        facts.set(name, {
          description: str(v['description']) ?? '',
          icon:
            base64data === undefined || mediatype === undefined ? null : { base64data, mediatype },
        });
      }
    }
    return { catalog: new RegistryCatalog(index, content, properties, facts), warnings };
  }

  /** Every package name, sorted. */
  packageNames(): string[] {
    return this.index.packages.map((p) => p.name);
  }

  /** GetPackage. */
  getPackage(name: string): ApiPackage {
    const pkg = this.index.getPackage(name);
    if (pkg === undefined) throw new RegistryNotFoundError(`package ${q(name)} not found`);
    return {
      name: pkg.name,
      channels: this.index.channelsOf(name).map((c) => ({
        name: c.name,
        csvName: c.head ?? '',
        deprecation: c.deprecation === null ? null : { message: c.deprecation },
      })),
      defaultChannelName: pkg.defaultChannel ?? '',
      deprecation: pkg.deprecation === null ? null : { message: pkg.deprecation },
    };
  }

  /** GetBundle: the bundle with its manifests; replaces and skips left empty, as upstream. */
  getBundle(pkgName: string, channelName: string, csvName: string): ApiBundle {
    const channel = this.#channel(pkgName, channelName);
    const entry = channel.entries.find((e) => e.name === csvName);
    if (entry === undefined) {
      throw new RegistryNotFoundError(
        `package ${q(pkgName)}, channel ${q(channelName)}, bundle ${q(csvName)} not found`,
      );
    }
    return { ...this.#bundle(channel, entry, true), replaces: '', skips: [] };
  }

  /** GetBundleForChannel: the channel head. */
  getBundleForChannel(pkgName: string, channelName: string): ApiBundle {
    const channel = this.#channel(pkgName, channelName);
    if (channel.head === null) {
      throw new RegistryNotFoundError(
        `package ${q(pkgName)}, channel ${q(channelName)} has no channel head`,
      );
    }
    return this.getBundle(pkgName, channelName, channel.head);
  }

  /** GetChannelEntriesThatReplace: entries of any package whose replaces or skips name `csvName`. */
  entriesThatReplace(csvName: string): ApiChannelEntry[] {
    this.#replacing ??= this.#replacingEntries();
    const found = this.#replacing.get(csvName);
    if (found === undefined) {
      throw new RegistryNotFoundError(`no channel entries found that replace ${csvName}`);
    }
    return found;
  }

  /** GetBundleThatReplaces: the first entry of the channel that replaces or skips `csvName`. */
  bundleThatReplaces(csvName: string, pkgName: string, channelName: string): ApiBundle {
    if (this.index.getPackage(pkgName) === undefined) {
      throw new RegistryNotFoundError(`package ${pkgName} not found`);
    }
    const channel = this.#channel(pkgName, channelName);
    const entry = channel.entries.find((e) => e.replaces === csvName || e.skips.includes(csvName));
    if (entry === undefined) {
      throw new RegistryNotFoundError(
        `no entry found for package ${q(pkgName)}, channel ${q(channelName)}`,
      );
    }
    return this.getBundle(pkgName, channelName, entry.name);
  }

  /** GetChannelEntriesThatProvide: every entry of every bundle that provides the API. */
  entriesThatProvide(group: string, version: string, kind: string): ApiChannelEntry[] {
    const out: ApiChannelEntry[] = [];
    for (const channel of this.index.channels) {
      for (const entry of channel.entries) {
        if (this.#provides(channel.package, entry.name, group, version, kind)) {
          out.push(...entriesOf(channel, entry, true));
        }
      }
    }
    if (out.length === 0)
      throw new RegistryNotFoundError(noProvider('channel entries', group, version, kind));
    return out;
  }

  /** GetLatestChannelEntriesThatProvide: the entries of channel heads that provide the API. */
  latestEntriesThatProvide(group: string, version: string, kind: string): ApiChannelEntry[] {
    const out: ApiChannelEntry[] = [];
    for (const channel of this.index.channels) {
      const head = channel.entries.find((e) => e.name === channel.head);
      if (head === undefined) continue;
      if (this.#provides(channel.package, head.name, group, version, kind)) {
        out.push(...entriesOf(channel, head, false));
      }
    }
    if (out.length === 0)
      throw new RegistryNotFoundError(noProvider('channel entries', group, version, kind));
    return out;
  }

  /** GetDefaultBundleThatProvides: the first package (by name) whose default channel head provides the API. */
  defaultBundleThatProvides(group: string, version: string, kind: string): ApiBundle {
    // Channels are sorted by package, so the first match is the first package by name.
    for (const entry of this.latestEntriesThatProvide(group, version, kind)) {
      const pkg = this.index.getPackage(entry.packageName);
      if (pkg?.defaultChannel === entry.channelName) {
        return this.getBundle(entry.packageName, entry.channelName, entry.bundleName);
      }
    }
    throw new RegistryNotFoundError(noProvider('entry', group, version, kind));
  }

  /**
   * ListBundles: every bundle once per channel, sorted by channel, package and bundle name;
   * csvJson and object only for bundles without an image (a client pulls the image otherwise).
   */
  *listBundles(): Generator<ApiBundle> {
    const rows: { channel: CatalogChannel; entry: CatalogChannelEntry }[] = [];
    for (const channel of this.index.channels)
      for (const entry of channel.entries) rows.push({ channel, entry });
    const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
    rows.sort(
      (a, b) =>
        cmp(a.channel.name, b.channel.name) ||
        cmp(a.channel.package, b.channel.package) ||
        cmp(a.entry.name, b.entry.name),
    );
    for (const { channel, entry } of rows) {
      const base = this.#bases.get(key(channel.package, entry.name));
      yield this.#bundle(channel, entry, base?.bundle.image === '');
    }
  }

  #channel(pkgName: string, channelName: string): CatalogChannel {
    if (this.index.getPackage(pkgName) === undefined) {
      throw new RegistryNotFoundError(`package ${q(pkgName)} not found`);
    }
    const channel = this.index.getChannel(pkgName, channelName);
    if (channel === undefined) {
      throw new RegistryNotFoundError(`package ${q(pkgName)}, channel ${q(channelName)} not found`);
    }
    return channel;
  }

  #provides(pkg: string, name: string, group: string, version: string, kind: string): boolean {
    const base = this.#bases.get(key(pkg, name));
    return (
      base?.providedApis.some(
        (a) => a.kind === kind && a.group === group && a.version === version,
      ) ?? false
    );
  }

  #bundle(channel: CatalogChannel, entry: CatalogChannelEntry, withManifests: boolean): ApiBundle {
    const base = this.#bases.get(key(channel.package, entry.name));
    if (base === undefined) {
      // Entries name bundles of the index by construction.
      throw new RegistryNotFoundError(`bundle ${q(entry.name)} not found`);
    }
    const b = base.bundle;
    const manifests = withManifests
      ? bundleManifestsJson(
          b.name,
          b.version,
          this.#content.get(b.package, b.name),
          this.#packageFacts.get(b.package),
        )
      : { csvJson: '', objects: [] };
    return {
      csvName: b.name,
      packageName: b.package,
      channelName: channel.name,
      csvJson: manifests.csvJson,
      object: [...manifests.objects],
      bundlePath: b.image,
      providedApis: [...base.providedApis],
      requiredApis: [...base.requiredApis],
      version: b.version,
      skipRange: entry.skipRange ?? '',
      dependencies: [...base.dependencies],
      properties: [...base.properties],
      replaces: entry.replaces ?? '',
      skips: [...entry.skips],
      deprecation: b.deprecation === null ? null : { message: b.deprecation },
    };
  }

  #replacingEntries(): Map<string, ApiChannelEntry[]> {
    const out = new Map<string, ApiChannelEntry[]>();
    const add = (name: string, e: ApiChannelEntry): void => {
      const list = out.get(name);
      if (list === undefined) out.set(name, [e]);
      else list.push(e);
    };
    for (const channel of this.index.channels) {
      for (const entry of channel.entries) {
        const e: ApiChannelEntry = {
          packageName: channel.package,
          channelName: channel.name,
          bundleName: entry.name,
          replaces: entry.replaces ?? '',
        };
        if (entry.replaces !== null) add(entry.replaces, e);
        // A skip that repeats replaces yields one entry; each entry carries its replaces.
        for (const s of new Set(entry.skips)) if (s !== entry.replaces) add(s, e);
      }
    }
    return out;
  }
}

function noProvider(what: string, group: string, version: string, kind: string): string {
  return `no ${what} found that provide${what === 'entry' ? 's' : ''} group:${q(group)} version:${q(version)} kind:${q(kind)}`;
}

// A bundle's entries as the *Provide* methods list them: one with its replaces, then one per skip
// (other than replaces) — every skip, or only skips that are entries of the channel.
function entriesOf(
  channel: CatalogChannel,
  entry: CatalogChannelEntry,
  anySkip: boolean,
): ApiChannelEntry[] {
  const at = { packageName: channel.package, channelName: channel.name, bundleName: entry.name };
  const out: ApiChannelEntry[] = [{ ...at, replaces: entry.replaces ?? '' }];
  for (const s of entry.skips) {
    if (s === entry.replaces) continue;
    if (anySkip || channel.entries.some((e) => e.name === s)) out.push({ ...at, replaces: s });
  }
  return out;
}

function bundleBase(bundle: CatalogBundle, raw: readonly RawProperty[]): BundleBase {
  const pluralOf = (
    apis: CatalogBundle['providedApis'],
    gvk: { group: string; version: string; kind: string },
  ): string =>
    apis.find((a) => a.group === gvk.group && a.version === gvk.version && a.kind === gvk.kind)
      ?.plural ?? '';
  const providedApis: ApiGroupVersionKind[] = [];
  const requiredApis: ApiGroupVersionKind[] = [];
  const dependencies: ApiDependency[] = [];
  const properties: ApiProperty[] = [];
  for (const p of raw) {
    if (p.type === 'olm.bundle.object' || p.type === 'olm.csv.metadata') continue;
    const json = JSON.stringify(p.value) ?? 'null';
    properties.push({ type: p.type, value: json });
    if (p.type === 'olm.gvk') {
      const gvk = gvkOf(p.value);
      if (gvk !== undefined)
        providedApis.push({ ...gvk, plural: pluralOf(bundle.providedApis, gvk) });
    } else if (p.type === 'olm.gvk.required') {
      const gvk = gvkOf(p.value);
      if (gvk !== undefined)
        requiredApis.push({ ...gvk, plural: pluralOf(bundle.requiredApis, gvk) });
      dependencies.push({ type: 'olm.gvk', value: json });
    } else if (p.type === 'olm.package.required' && isRecord(p.value)) {
      const packageName = str(p.value['packageName']);
      const versionRange = str(p.value['versionRange']);
      if (packageName !== undefined && versionRange !== undefined) {
        // Upstream restates it as an olm.package value: {packageName, version: <range>}.
        dependencies.push({
          type: 'olm.package',
          value: JSON.stringify({ packageName, version: versionRange }),
        });
      }
    }
  }
  return { bundle, providedApis, requiredApis, dependencies, properties };
}
