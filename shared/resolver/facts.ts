// From OLM objects (as mirrored or read from files) to the facts the resolver reads. A resolve
// function builds its ResolverInput with these; so does `olmq resolve`.
import type { ClusterServiceVersion, OperatorGroup, Subscription } from '../api/index.js';
import { codes } from '../api/index.js';
import type {
  ApiFact,
  InstalledCsvFacts,
  OperatorGroupFacts,
  PropertyFact,
  ResolverCatalog,
  SubscriptionFacts,
} from './model.js';
import type { CopiedCsvFacts } from './provided-elsewhere.js';

/** A properties annotation that is not the JSON OLM writes. */
export class PropertiesAnnotationError extends Error {
  override readonly name = 'PropertiesAnnotationError';
  constructor(
    /** The CSV's name. */
    readonly csv: string,
    detail: string,
  ) {
    super(
      `failed to retrieve properties of csv "${csv}": annotation ${codes.OlmAnnotation.Properties} ${detail}`,
    );
  }
}

const emptyToNull = (s: string | undefined): string | null =>
  s === undefined || s === '' ? null : s;

/** A Subscription's resolution facts. */
export function subscriptionFacts(sub: Subscription): SubscriptionFacts {
  return {
    name: sub.metadata.name ?? '',
    package: sub.spec.name,
    channel: emptyToNull(sub.spec.channel),
    source: { name: sub.spec.source, namespace: sub.spec.sourceNamespace },
    startingCSV: emptyToNull(sub.spec.startingCSV),
    installedCSV: emptyToNull(sub.status?.installedCSV),
  };
}

/** Parses operatorframework.io/properties (`{"properties":[{type, value}, ...]}`); throws PropertiesAnnotationError. */
export function parsePropertiesAnnotation(csv: string, text: string): PropertyFact[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new PropertiesAnnotationError(csv, `is not JSON: ${(error as Error).message}`);
  }
  const list = (parsed as { properties?: unknown } | null)?.properties;
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new PropertiesAnnotationError(csv, 'has no properties list');
  return list.map((p: unknown, i) => {
    if (typeof p !== 'object' || p === null || typeof (p as { type?: unknown }).type !== 'string') {
      throw new PropertiesAnnotationError(csv, `has an entry without a type at properties[${i}]`);
    }
    return { type: (p as { type: string }).type, value: (p as { value?: unknown }).value };
  });
}

function crdApi(name: string, version: string, kind: string): ApiFact {
  const dot = name.indexOf('.');
  return { group: dot < 0 ? '' : name.slice(dot + 1), version, kind };
}

/** Whether the CSV is a copy made for an OperatorGroup target namespace (resolution ignores those). */
export function isCopiedCsv(csv: ClusterServiceVersion): boolean {
  return (
    csv.metadata.labels?.[codes.OlmLabel.CopiedFrom] !== undefined ||
    csv.status?.reason === codes.CsvReason.Copied
  );
}

/** A copied CSV's facts: its name, package (when its properties say) and where it comes from. */
export function copiedCsvFacts(csv: ClusterServiceVersion): CopiedCsvFacts {
  const name = csv.metadata.name ?? '';
  let pkg: string | null = null;
  const text = csv.metadata.annotations?.[codes.OlmAnnotation.Properties];
  try {
    const property = (text === undefined ? [] : parsePropertiesAnnotation(name, text)).find(
      (p) => p.type === 'olm.package',
    );
    const value = property?.value as { packageName?: unknown } | undefined;
    if (typeof value?.packageName === 'string') pkg = value.packageName;
  } catch {
    // An unreadable annotation on a copy: matched by name only.
  }
  return {
    name,
    package: pkg,
    copiedFrom: csv.metadata.labels?.[codes.OlmLabel.CopiedFrom] ?? '',
  };
}

/** An installed CSV's resolution facts; throws PropertiesAnnotationError for an unreadable annotation. */
export function installedCsvFacts(csv: ClusterServiceVersion): InstalledCsvFacts {
  const name = csv.metadata.name ?? '';
  const annotation = csv.metadata.annotations?.[codes.OlmAnnotation.Properties];
  const crds = csv.spec.customresourcedefinitions;
  const apis = csv.spec.apiservicedefinitions;
  return {
    name,
    version: emptyToNull(csv.spec.version),
    properties: annotation === undefined ? null : parsePropertiesAnnotation(name, annotation),
    ownedApis: [
      ...(crds?.owned ?? []).map((c) => crdApi(c.name, c.version, c.kind)),
      ...(apis?.owned ?? []).map((a) => ({ group: a.group, version: a.version, kind: a.kind })),
    ],
    requiredApis: [
      ...(crds?.required ?? []).map((c) => crdApi(c.name, c.version, c.kind)),
      ...(apis?.required ?? []).map((a) => ({ group: a.group, version: a.version, kind: a.kind })),
    ],
  };
}

/** An OperatorGroup's resolution facts. */
export function operatorGroupFacts(og: OperatorGroup, namespace: string): OperatorGroupFacts {
  const targets = og.status?.namespaces ?? og.spec?.targetNamespaces ?? null;
  let installMode: string;
  if (
    targets === null ? og.spec?.selector === undefined : targets.length === 1 && targets[0] === ''
  ) {
    installMode = codes.InstallModeType.AllNamespaces;
  } else if (targets !== null && targets.length === 1 && targets[0] === namespace) {
    installMode = codes.InstallModeType.OwnNamespace;
  } else if (targets !== null && targets.length === 1) {
    installMode = codes.InstallModeType.SingleNamespace;
  } else {
    installMode = codes.InstallModeType.MultiNamespace;
  }
  return {
    name: og.metadata.name ?? '',
    excludeGlobalCatalogs:
      og.metadata.annotations?.[codes.OlmAnnotation.ExcludeGlobalNamespaceResolution] === 'true',
    installMode,
  };
}

/**
 * The catalogs a namespace resolves against: its own, plus the global catalog namespace's
 * unless its OperatorGroup excludes them.
 */
export function visibleCatalogs(
  all: readonly ResolverCatalog[],
  namespace: string,
  globalNamespace: string,
  excludeGlobal: boolean,
): ResolverCatalog[] {
  return all.filter(
    (c) => c.namespace === namespace || (!excludeGlobal && c.namespace === globalNamespace),
  );
}
