// Bytes for the JetStream object store: the hot index (what resolvers load) and the bundle
// content (manifests, loaded only by installs) are separate blobs, both keyed by the digest.
import type { BundleContent, CatalogContent } from './bundle-content.js';
import {
  CatalogIndex,
  channelEdges,
  type CatalogApi,
  type CatalogBundle,
  type CatalogChannel,
  type CatalogInstallMode,
  type CatalogIndexData,
  type CatalogPackage,
} from './model.js';
import { SerializedIndexError } from './problems.js';

const indexFormat = 'olmq.catalog-index/v1';
const contentFormat = 'olmq.catalog-content/v1';

// On the wire a channel carries its skipRange edges as pairs of positions in the package's
// (name-sorted) bundle list; replaces/skips edges are rebuilt from the entries. This halves the
// bytes a resolver must parse.
type WireChannel = Omit<CatalogChannel, 'edges'> & { readonly rangeEdges: readonly number[] };

// Bundles refer to shared tables for APIs and install-mode sets: the same GVKs and modes recur
// across every version of a package, so on load each distinct value is one shared object.
type WireBundle = Omit<CatalogBundle, 'providedApis' | 'requiredApis' | 'installModes'> & {
  readonly providedApis: readonly number[];
  readonly requiredApis: readonly number[];
  readonly installModes: number | null;
};

interface WireIndex {
  readonly format: string;
  readonly digest: string;
  readonly packages: readonly CatalogPackage[];
  readonly channels: readonly WireChannel[];
  readonly apis: readonly CatalogApi[];
  readonly installModeSets: readonly (readonly CatalogInstallMode[])[];
  readonly bundles: readonly WireBundle[];
}

// Assigns each distinct value (by its JSON) a position in a table.
class Table<T> {
  readonly values: T[] = [];
  readonly #positions = new Map<string, number>();

  add(value: T): number {
    const key = JSON.stringify(value);
    let position = this.#positions.get(key);
    if (position === undefined) {
      position = this.values.length;
      this.values.push(value);
      this.#positions.set(key, position);
    }
    return position;
  }
}

function wireBundles(bundles: readonly CatalogBundle[]): {
  apis: CatalogApi[];
  installModeSets: (readonly CatalogInstallMode[])[];
  bundles: WireBundle[];
} {
  const apis = new Table<CatalogApi>();
  const modes = new Table<readonly CatalogInstallMode[]>();
  const out = bundles.map((b): WireBundle => ({
    ...b,
    providedApis: b.providedApis.map((a) => apis.add(a)),
    requiredApis: b.requiredApis.map((a) => apis.add(a)),
    installModes: b.installModes === null ? null : modes.add(b.installModes),
  }));
  return { apis: apis.values, installModeSets: modes.values, bundles: out };
}

function restoreBundles(
  bundles: readonly WireBundle[],
  apis: readonly CatalogApi[],
  installModeSets: readonly (readonly CatalogInstallMode[])[],
): CatalogBundle[] {
  for (const api of apis) Object.freeze(api);
  for (const set of installModeSets) {
    for (const mode of set) Object.freeze(mode);
    Object.freeze(set);
  }
  const api = (position: number): CatalogApi => {
    const value = apis[position];
    if (value === undefined) throw new SerializedIndexError(`API #${position} missing`);
    return value;
  };
  // The parsed records are this function's own, so they are completed in place: copying
  // thousands of bundles would cost a good share of the load time.
  return bundles.map((b) => {
    let installModes: readonly CatalogInstallMode[] | null = null;
    if (b.installModes !== null) {
      installModes = installModeSets[b.installModes] ?? null;
      if (installModes === null) throw new SerializedIndexError(`install mode set missing`);
    }
    const record = b as unknown as Record<keyof CatalogBundle, unknown>;
    record.providedApis = b.providedApis.map(api);
    record.requiredApis = b.requiredApis.map(api);
    record.installModes = installModes;
    return record as unknown as CatalogBundle;
  });
}

// Positions of each package's bundles in the name-sorted list of that package's bundles.
function bundlePositions(bundles: readonly CatalogBundle[]): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const b of bundles) {
    let names = out.get(b.package);
    if (names === undefined) {
      names = new Map<string, number>();
      out.set(b.package, names);
    }
    names.set(b.name, names.size);
  }
  return out;
}

/** Serializes an index to bytes (UTF-8 JSON with a format tag). */
export function serializeCatalogIndex(index: CatalogIndex): Uint8Array {
  const positions = bundlePositions(index.bundles);
  const channels = index.channels.map((c): WireChannel => {
    const names = positions.get(c.package);
    const rangeEdges: number[] = [];
    for (const edge of c.edges) {
      if (edge.via !== 'skipRange') continue;
      const from = names?.get(edge.from);
      const to = names?.get(edge.to);
      if (from !== undefined && to !== undefined) rangeEdges.push(from, to);
    }
    const { edges: _edges, ...rest } = c;
    return { ...rest, rangeEdges };
  });
  const data: WireIndex = {
    format: indexFormat,
    digest: index.digest,
    packages: index.packages,
    channels,
    ...wireBundles(index.bundles),
  };
  return Buffer.from(JSON.stringify(data), 'utf8');
}

function restoreChannels(
  channels: readonly WireChannel[],
  bundles: readonly CatalogBundle[],
): CatalogChannel[] {
  const names = new Map<string, string[]>();
  for (const b of bundles) {
    const list = names.get(b.package);
    if (list === undefined) names.set(b.package, [b.name]);
    else list.push(b.name);
  }
  return channels.map((wire) => {
    const list = names.get(wire.package) ?? [];
    const rangeFroms = new Map<string, string[]>();
    for (let i = 0; i + 1 < wire.rangeEdges.length; i += 2) {
      const from = list[wire.rangeEdges[i] ?? -1];
      const to = list[wire.rangeEdges[i + 1] ?? -1];
      if (from === undefined || to === undefined) {
        throw new SerializedIndexError(`channel ${wire.package}/${wire.name}: bad edge`);
      }
      const froms = rangeFroms.get(to);
      if (froms === undefined) rangeFroms.set(to, [from]);
      else froms.push(from);
    }
    const { rangeEdges: _rangeEdges, ...rest } = wire;
    return { ...rest, edges: channelEdges(wire.entries, rangeFroms) };
  });
}

function isArray(value: unknown): value is unknown[] {
  return Array.isArray(value);
}

/** Loads an index from bytes made by serializeCatalogIndex; throws SerializedIndexError otherwise. */
export function loadCatalogIndex(bytes: Uint8Array): CatalogIndex {
  let value: unknown;
  try {
    value = JSON.parse(
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
    );
  } catch (error) {
    throw new SerializedIndexError('not JSON', { cause: error });
  }
  const data = value as Partial<Record<string, unknown>> | null;
  if (typeof data !== 'object' || data === null || data['format'] !== indexFormat) {
    throw new SerializedIndexError(`expected format ${indexFormat}`);
  }
  const { digest, packages, channels, bundles, apis, installModeSets } = data;
  if (
    typeof digest !== 'string' ||
    !isArray(packages) ||
    !isArray(channels) ||
    !isArray(bundles) ||
    !isArray(apis) ||
    !isArray(installModeSets)
  ) {
    throw new SerializedIndexError('digest, packages, channels, bundles or tables missing');
  }
  // The bytes were written by serializeCatalogIndex and are addressed by their digest, so the
  // records are trusted as they are: checking each of them would cost most of the load time.
  const typedBundles = restoreBundles(
    bundles as WireBundle[],
    apis as CatalogApi[],
    installModeSets as CatalogInstallMode[][],
  );
  return new CatalogIndex({
    digest,
    packages: packages as CatalogIndexData['packages'],
    channels: restoreChannels(channels as WireChannel[], typedBundles),
    bundles: typedBundles,
  });
}

type ContentTableRow = [pkg: string, name: string, offset: number, length: number];

/**
 * Serializes bundle content: a one-line JSON header (format, digest, table of segments) then
 * one JSON segment per bundle, so a loader decodes only the bundles it is asked for.
 */
export function serializeCatalogContent(content: CatalogContent): Uint8Array {
  const segments: Buffer[] = [];
  const table: ContentTableRow[] = [];
  let offset = 0;
  for (const [pkg, name] of content.keys()) {
    const bundle = content.get(pkg, name);
    if (bundle === undefined) continue;
    const segment = Buffer.from(JSON.stringify(bundle), 'utf8');
    table.push([pkg, name, offset, segment.length]);
    segments.push(segment);
    offset += segment.length;
  }
  const header = Buffer.from(
    `${JSON.stringify({ format: contentFormat, digest: content.digest, bundles: table })}\n`,
    'utf8',
  );
  return Buffer.concat([header, ...segments]);
}

/** Bundle content read from bytes; each bundle is decoded on first use. */
class SerializedCatalogContent implements CatalogContent {
  readonly digest: string;
  readonly #body: Buffer;
  readonly #table: Map<string, ContentTableRow>;

  constructor(digest: string, body: Buffer, rows: readonly ContentTableRow[]) {
    this.digest = digest;
    this.#body = body;
    this.#table = new Map(rows.map((r) => [`${r[0]}\u0000${r[1]}`, r]));
  }

  get size(): number {
    return this.#table.size;
  }

  get(pkg: string, name: string): BundleContent | undefined {
    const row = this.#table.get(`${pkg}\u0000${name}`);
    if (row === undefined) return undefined;
    const text = this.#body.toString('utf8', row[2], row[2] + row[3]);
    return JSON.parse(text) as BundleContent;
  }

  *keys(): Iterable<readonly [string, string]> {
    for (const row of this.#table.values()) yield [row[0], row[1]];
  }
}

/** Loads bundle content from bytes made by serializeCatalogContent; decodes bundles lazily. */
export function loadCatalogContent(bytes: Uint8Array): CatalogContent {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const newline = buffer.indexOf(10);
  if (newline === -1) throw new SerializedIndexError('content header missing');
  let header: unknown;
  try {
    header = JSON.parse(buffer.toString('utf8', 0, newline));
  } catch (error) {
    throw new SerializedIndexError('content header is not JSON', { cause: error });
  }
  const h = header as Partial<Record<string, unknown>> | null;
  if (typeof h !== 'object' || h === null || h['format'] !== contentFormat) {
    throw new SerializedIndexError(`expected format ${contentFormat}`);
  }
  const digest = h['digest'];
  const rows = h['bundles'];
  if (typeof digest !== 'string' || !isArray(rows)) {
    throw new SerializedIndexError('content digest or table missing');
  }
  const body = buffer.subarray(newline + 1);
  for (const row of rows) {
    const ok =
      isArray(row) &&
      typeof row[0] === 'string' &&
      typeof row[1] === 'string' &&
      typeof row[2] === 'number' &&
      typeof row[3] === 'number' &&
      row[2] + row[3] <= body.length;
    if (!ok) throw new SerializedIndexError('content table row is malformed');
  }
  return new SerializedCatalogContent(digest, body, rows as ContentTableRow[]);
}
