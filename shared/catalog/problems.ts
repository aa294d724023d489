// The catalogue of what can go wrong while reading a catalog: warnings for data that is dropped
// or tolerated, and typed errors for input that makes the whole catalog unusable. Codes are public
// surface (status messages, logs, metric labels): add new ones, never rename.

/** Stable codes of catalog warnings; each names one kind of irregularity in catalog data. */
export const CatalogWarningCode = {
  /** An object has a schema olmq does not use; it is kept in the parse result and ignored. */
  UnknownSchema: 'unknown-schema',
  /** An object has no `schema` field; it is ignored. */
  SchemaMissing: 'schema-missing',
  /** An olm.package/olm.channel/olm.bundle/olm.deprecations object does not match its schema; dropped. */
  ObjectInvalid: 'object-invalid',
  /** A second olm.package object with the same name; the later one is dropped. */
  PackageDuplicate: 'package-duplicate',
  /** A channel or bundle names a package that has no olm.package object; it is dropped. */
  PackageUnknown: 'package-unknown',
  /** A package ends up without any usable channel; it is dropped. */
  PackageWithoutChannels: 'package-without-channels',
  /** defaultChannel is unset or names no usable channel; the package is kept without a default. */
  DefaultChannelMissing: 'default-channel-missing',
  /** A second olm.channel object with the same name in one package; the later one is dropped. */
  ChannelDuplicate: 'channel-duplicate',
  /** A channel entry repeats a bundle name already listed in the channel; the repeat is dropped. */
  ChannelEntryDuplicate: 'channel-entry-duplicate',
  /** A channel entry names a bundle the package does not have; the entry is dropped. */
  ChannelEntryUnknownBundle: 'channel-entry-unknown-bundle',
  /** A channel has no entries left; it is dropped. */
  ChannelEmpty: 'channel-empty',
  /** Every entry is replaced or skipped by another ("no channel head found in graph"); kept without head. */
  ChannelNoHead: 'channel-no-head',
  /** Several entries are not replaced or skipped ("multiple channel heads found in graph"); the highest version is used. */
  ChannelMultipleHeads: 'channel-multiple-heads',
  /** The replaces chain from the head loops back on itself. */
  ChannelReplacesCycle: 'channel-replaces-cycle',
  /** Entries neither on the replaces chain from the head nor skipped ("stranded bundles"). */
  ChannelStrandedEntries: 'channel-stranded-entries',
  /** A replaces edge names a bundle that is not an entry of the channel (kept: an installed CSV may still carry that name). */
  ReplacesNotInChannel: 'replaces-not-in-channel',
  /** A skips edge names a bundle that is not an entry of the channel (kept, as for replaces). */
  SkipsNotInChannel: 'skips-not-in-channel',
  /** A skipRange does not parse as a semver range; it yields no upgrade edges. */
  SkipRangeInvalid: 'skip-range-invalid',
  /** The channel entry's skipRange differs from the CSV's olm.skipRange annotation; the entry wins. */
  SkipRangeMismatch: 'skip-range-mismatch',
  /** A second olm.bundle object with the same name in one package; the later one is dropped. */
  BundleDuplicate: 'bundle-duplicate',
  /** A bundle is not an entry of any channel ("not found in any channel entries"); dropped. */
  BundleNotInChannel: 'bundle-not-in-channel',
  /** A bundle lacks the olm.package property, so it has no version; dropped. */
  BundlePackagePropertyMissing: 'bundle-package-property-missing',
  /** A bundle has several olm.package properties; the one naming its own package is used. */
  BundlePackagePropertyMultiple: 'bundle-package-property-multiple',
  /** The olm.package property names another package than the bundle's `package` field. */
  BundlePackageMismatch: 'bundle-package-mismatch',
  /** The bundle version is not semver; kept as a raw string and left out of version ranges. */
  BundleVersionInvalid: 'bundle-version-invalid',
  /** Several bundles of one package share a version ("duplicate versions found in bundles"). */
  BundleVersionDuplicate: 'bundle-version-duplicate',
  /** A bundle has neither an image nor manifests, so it cannot be installed; dropped. */
  BundleImageMissing: 'bundle-image-missing',
  /** No ClusterServiceVersion in olm.bundle.object nor olm.csv.metadata: install modes unknown. */
  BundleCsvMissing: 'bundle-csv-missing',
  /** An olm.bundle.object cannot be decoded (base64 → JSON/YAML); it is left out. */
  BundleObjectInvalid: 'bundle-object-invalid',
  /** A known property type has a malformed value; the property is dropped. */
  PropertyInvalid: 'property-invalid',
  /** A package has more than one olm.deprecations object; only the first is used. */
  DeprecationDuplicate: 'deprecation-duplicate',
  /** A deprecation entry names a channel or bundle the package does not have. */
  DeprecationUnknownReference: 'deprecation-unknown-reference',
} as const;

/** A catalog warning code. */
export type CatalogWarningCode = (typeof CatalogWarningCode)[keyof typeof CatalogWarningCode];

/** One irregularity found in catalog data, with what it concerns and what olmq did about it. */
export interface CatalogWarning {
  /** Stable code (see CatalogWarningCode). */
  readonly code: CatalogWarningCode;
  /** The package concerned, when known. */
  readonly package?: string;
  /** The channel concerned, when the warning is about a channel. */
  readonly channel?: string;
  /** The bundle concerned, when the warning is about a bundle. */
  readonly bundle?: string;
  /** Where the object came from ("dir/pkg/catalog.json:12"), when known. */
  readonly origin?: string;
  /** What is wrong and what olmq did, for a person to act on. */
  readonly message: string;
}

/** Stable codes of errors that make a whole catalog unusable. */
export const CatalogErrorCode = {
  /** A file or text is not valid JSON/YAML. */
  Malformed: 'catalog-malformed',
  /** The catalog directory or a file cannot be read. */
  Unreadable: 'catalog-unreadable',
  /** Serialized index bytes are not an index of a format this version can read. */
  SerializedInvalid: 'catalog-serialized-invalid',
} as const;

/** A catalog error code. */
export type CatalogErrorCode = (typeof CatalogErrorCode)[keyof typeof CatalogErrorCode];

/** Base of every catalog error; `retryable` says whether trying again later can help. */
export abstract class CatalogError extends Error {
  /** Stable code of this failure kind. */
  abstract readonly code: CatalogErrorCode;
  /** Whether retrying the same operation later can succeed (e.g. a file being written). */
  abstract readonly retryable: boolean;
}

/** Catalog text that is not valid JSON or YAML; names the file and line. */
export class CatalogMalformedError extends CatalogError {
  override readonly name = 'CatalogMalformedError';
  readonly code = CatalogErrorCode.Malformed;
  readonly retryable = false;
  /** The file (or ConfigMap key) holding the bad text. */
  readonly file: string;
  /** 1-based line where the bad object starts. */
  readonly line: number;

  constructor(file: string, line: number, detail: string, options?: { cause?: unknown }) {
    super(`${file}:${line}: not valid catalog JSON/YAML: ${detail}`, options);
    this.file = file;
    this.line = line;
  }
}

/** A catalog directory or file that cannot be read. */
export class CatalogUnreadableError extends CatalogError {
  override readonly name = 'CatalogUnreadableError';
  readonly code = CatalogErrorCode.Unreadable;
  readonly retryable = true;
  /** The path that could not be read. */
  readonly path: string;

  constructor(path: string, options?: { cause?: unknown }) {
    const reason = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(`cannot read catalog at ${path}${reason}`, options);
    this.path = path;
  }
}

/** Bytes that are not a serialized catalog index (or catalog content) of a known format. */
export class SerializedIndexError extends CatalogError {
  override readonly name = 'SerializedIndexError';
  readonly code = CatalogErrorCode.SerializedInvalid;
  readonly retryable = false;

  constructor(detail: string, options?: { cause?: unknown }) {
    super(`not a serialized catalog index: ${detail}`, options);
  }
}
