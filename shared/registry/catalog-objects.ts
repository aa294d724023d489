// Turns what a registry answered (packages, ListBundles, each bundle's manifests) back into
// File-Based Catalog objects, so a gRPC catalog goes through the same index build as a
// directory. Pure and deterministic: the same answers give the same objects in the same order,
// hence the same catalog digest.
import { createHash } from 'node:crypto';
import type { CatalogObject } from '../catalog/index.js';
import type { ApiBundle, ApiPackage } from './protocol.js';

/** A bundle's manifests ready for olm.bundle.object: base64 of each, and their digest. */
export interface BundleManifestData {
  /** base64 of each manifest's JSON, in order. */
  readonly base64: readonly string[];
  /** sha256 (hex) over the manifests' bytes, for the object hash. */
  readonly hash: string;
}

/** Prepares manifests (JSON text or its UTF-8 bytes) for olm.bundle.object. */
export function bundleManifestData(objects: readonly (string | Uint8Array)[]): BundleManifestData {
  const hash = createHash('sha256');
  const base64 = objects.map((o) => {
    const bytes =
      typeof o === 'string'
        ? Buffer.from(o, 'utf8')
        : Buffer.from(o.buffer, o.byteOffset, o.byteLength);
    hash.update(bytes).update('\u0000');
    return bytes.toString('base64');
  });
  return { base64, hash: hash.digest('hex') };
}

/** Everything read from one registry. */
export interface RegistryAnswers {
  /** GetPackage of every listed package. */
  readonly packages: readonly ApiPackage[];
  /** ListBundles: one message per bundle and channel. */
  readonly bundles: readonly ApiBundle[];
  /**
   * Manifests fetched with GetBundle, keyed by bundleKey(package, csvName); bundles missing here
   * use the manifests of their ListBundles message.
   */
  readonly manifests: ReadonlyMap<string, BundleManifestData>;
}

/** Key of a bundle in RegistryAnswers.manifests. */
export function bundleKey(pkg: string, csvName: string): string {
  return `${pkg}\u0000${csvName}`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// A bundle's manifests enter the hash by their digest rather than as the base64 inside `value`:
// the same content gives the same hash without serializing ~100 MB again.
function catalogObject(
  address: string,
  value: Record<string, unknown>,
  what: string,
  manifestsHash = '',
): CatalogObject {
  const hash = createHash('sha256').update(JSON.stringify(value)).update(manifestsHash);
  return {
    schema: value['schema'] as string,
    value,
    origin: `registry ${address}: ${what}`,
    hash: hash.digest('hex'),
  };
}

function parseValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // Kept as text: the index build reports the property as invalid.
    return text;
  }
}

// Registries that predate bundle properties (old SQLite-based servers) send only the fields;
// rebuild the properties an FBC bundle would carry from them.
function legacyProperties(b: ApiBundle): { type: string; value: unknown }[] {
  const out: { type: string; value: unknown }[] = [
    { type: 'olm.package', value: { packageName: b.packageName, version: b.version } },
  ];
  for (const a of b.providedApis)
    out.push({ type: 'olm.gvk', value: { group: a.group, kind: a.kind, version: a.version } });
  for (const a of b.requiredApis)
    out.push({
      type: 'olm.gvk.required',
      value: { group: a.group, kind: a.kind, version: a.version },
    });
  for (const d of b.dependencies) {
    const v = parseValue(d.value) as Record<string, unknown> | null;
    if (d.type === 'olm.package' && typeof v?.['packageName'] === 'string') {
      out.push({
        type: 'olm.package.required',
        value: { packageName: v['packageName'], versionRange: v['version'] },
      });
    }
  }
  return out;
}

function bundleObject(
  address: string,
  b: ApiBundle,
  manifests: RegistryAnswers['manifests'],
): CatalogObject {
  const properties =
    b.properties.length > 0
      ? b.properties.map((p) => ({ type: p.type, value: parseValue(p.value) }))
      : legacyProperties(b);
  const data =
    manifests.get(bundleKey(b.packageName, b.csvName)) ??
    bundleManifestData(b.object.length > 0 ? b.object : b.csvJson === '' ? [] : [b.csvJson]);
  const value: Record<string, unknown> = {
    schema: 'olm.bundle',
    name: b.csvName,
    package: b.packageName,
    ...(b.bundlePath === '' ? {} : { image: b.bundlePath }),
    properties,
  };
  const object = catalogObject(
    address,
    value,
    `olm.bundle ${b.packageName}/${b.csvName}`,
    data.hash,
  );
  // Added after hashing (see catalogObject).
  for (const base64 of data.base64) {
    properties.push({ type: 'olm.bundle.object', value: { data: base64 } });
  }
  return object;
}

interface PackageParts {
  pkg: ApiPackage | undefined;
  // channel name → entries (ListBundles messages)
  channels: Map<string, ApiBundle[]>;
  // bundle name → first message seen
  bundles: Map<string, ApiBundle>;
}

/** The File-Based Catalog objects equivalent to a registry's answers, sorted by package. */
export function registryCatalogObjects(address: string, answers: RegistryAnswers): CatalogObject[] {
  const parts = new Map<string, PackageParts>();
  const partsOf = (name: string): PackageParts => {
    let p = parts.get(name);
    if (p === undefined) {
      p = { pkg: undefined, channels: new Map(), bundles: new Map() };
      parts.set(name, p);
    }
    return p;
  };
  for (const pkg of answers.packages) {
    const p = partsOf(pkg.name);
    p.pkg = pkg;
    for (const c of pkg.channels) if (!p.channels.has(c.name)) p.channels.set(c.name, []);
  }
  for (const b of answers.bundles) {
    const p = partsOf(b.packageName);
    const entries = p.channels.get(b.channelName);
    if (entries === undefined) p.channels.set(b.channelName, [b]);
    else entries.push(b);
    if (!p.bundles.has(b.csvName)) p.bundles.set(b.csvName, b);
  }

  const out: CatalogObject[] = [];
  for (const name of [...parts.keys()].sort(compare)) {
    const p = parts.get(name);
    if (p === undefined) continue;
    if (p.pkg !== undefined) {
      const value: Record<string, unknown> = { schema: 'olm.package', name };
      if (p.pkg.defaultChannelName !== '') value['defaultChannel'] = p.pkg.defaultChannelName;
      out.push(catalogObject(address, value, `olm.package ${name}`));
    }
    for (const channel of [...p.channels.keys()].sort(compare)) {
      const entries = [...(p.channels.get(channel) ?? [])]
        .sort((a, b) => compare(a.csvName, b.csvName))
        .map((b) => ({
          name: b.csvName,
          ...(b.replaces === '' ? {} : { replaces: b.replaces }),
          ...(b.skips.length === 0 ? {} : { skips: b.skips }),
          ...(b.skipRange === '' ? {} : { skipRange: b.skipRange }),
        }));
      out.push(
        catalogObject(
          address,
          { schema: 'olm.channel', package: name, name: channel, entries },
          `olm.channel ${name}/${channel}`,
        ),
      );
    }
    for (const bundle of [...p.bundles.keys()].sort(compare)) {
      const b = p.bundles.get(bundle);
      if (b !== undefined) out.push(bundleObject(address, b, answers.manifests));
    }
    const deprecations = deprecationEntries(p);
    if (deprecations.length > 0) {
      out.push(
        catalogObject(
          address,
          { schema: 'olm.deprecations', package: name, entries: deprecations },
          `olm.deprecations ${name}`,
        ),
      );
    }
  }
  return out;
}

function deprecationEntries(p: PackageParts): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const message = p.pkg?.deprecation?.message;
  if (message !== undefined && message !== '')
    out.push({ reference: { schema: 'olm.package' }, message });
  for (const c of [...(p.pkg?.channels ?? [])].sort((a, b) => compare(a.name, b.name))) {
    const m = c.deprecation?.message;
    if (m !== undefined && m !== '')
      out.push({ reference: { schema: 'olm.channel', name: c.name }, message: m });
  }
  for (const name of [...p.bundles.keys()].sort(compare)) {
    const m = p.bundles.get(name)?.deprecation?.message;
    if (m !== undefined && m !== '')
      out.push({ reference: { schema: 'olm.bundle', name }, message: m });
  }
  return out;
}
