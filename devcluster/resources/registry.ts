// The registry of served kinds (built-in ones and those CustomResourceDefinitions define), with
// the names derived from a group/version/resource.
import type { ResourceType } from './types.js';

/** Key of a resource's storage, shared by all its versions: "deployments.apps", "pods". */
export function storageKey(group: string, resource: string): string {
  return group === '' ? resource : `${resource}.${group}`;
}

/** The storage key of a served type (a converted version's is its storage's). */
export function typeStorageKey(type: ResourceType): string {
  const storage = type.conversion?.storage;
  return storage
    ? storageKey(storage.group, storage.resource)
    : storageKey(type.group, type.resource);
}

/** apiVersion string of a group/version ("v1" for core). */
export function apiVersionOf(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

/** All served types, indexed for routing, discovery and OpenAPI; CRD types come and go. */
export class ResourceRegistry {
  private readonly byGvr = new Map<string, ResourceType>();
  /** Bumped on every change, so documents derived from the registry can be cached. */
  generation = 0;

  constructor(types: readonly ResourceType[]) {
    for (const type of types) this.add(type);
  }

  /** Serves a type (replacing one of the same group/version/resource). */
  add(type: ResourceType): void {
    this.byGvr.set(`${type.group}/${type.version}/${type.resource}`, type);
    this.generation++;
  }

  /** Stops serving every version defined by the CRD `crdName`. */
  removeCrd(crdName: string): void {
    for (const [key, type] of this.byGvr) if (type.crdName === crdName) this.byGvr.delete(key);
    this.generation++;
  }

  /** The type served at group/version/resource, if any. */
  get(group: string, version: string, resource: string): ResourceType | undefined {
    return this.byGvr.get(`${group}/${version}/${resource}`);
  }

  /** The type served for group/resource at its storage version (else any served version), if any. */
  atStorageVersion(group: string, resource: string): ResourceType | undefined {
    let other: ResourceType | undefined;
    for (const type of this.byGvr.values()) {
      if (type.group !== group || type.resource !== resource) continue;
      if (type.version === type.storageVersion) return type;
      other ??= type;
    }
    return other;
  }

  /** The type of a kind at an apiVersion, if served. */
  byKind(apiVersion: string, kind: string): ResourceType | undefined {
    for (const type of this.byGvr.values()) {
      if (type.kind === kind && apiVersionOf(type.group, type.version) === apiVersion) return type;
    }
    return undefined;
  }

  /** Whether the resource stored under a storage key is cluster-scoped. */
  clusterScoped(key: string): boolean {
    for (const type of this.byGvr.values())
      if (!type.namespaced && storageKey(type.group, type.resource) === key) return true;
    return false;
  }

  /** Every served type. */
  all(): ResourceType[] {
    return [...this.byGvr.values()];
  }

  /** Whether any version of the group is served. */
  hasGroup(group: string): boolean {
    for (const type of this.byGvr.values()) if (type.group === group) return true;
    return false;
  }

  /**
   * Served groups with their versions, preferred (first) version per Kubernetes' version
   * priority (v1 > v1beta1 > v1alpha1, higher numbers first).
   */
  groups(): { group: string; versions: string[] }[] {
    const map = new Map<string, Set<string>>();
    for (const type of this.byGvr.values()) {
      let versions = map.get(type.group);
      if (!versions) map.set(type.group, (versions = new Set()));
      versions.add(type.version);
    }
    return [...map.entries()].map(([group, versions]) => ({
      group,
      versions: [...versions].sort(compareKubeVersions),
    }));
  }
}

function versionRank(version: string): [number, number, number] {
  const match = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(version);
  if (!match) return [3, 0, 0];
  const stability = match[2] === undefined ? 0 : match[2] === 'beta' ? 1 : 2;
  return [stability, -Number(match[1]), -Number(match[3] ?? 0)];
}

/** Orders versions as Kubernetes prefers them: GA before beta before alpha, higher first, others last. */
export function compareKubeVersions(a: string, b: string): number {
  const [sa, ma, na] = versionRank(a);
  const [sb, mb, nb] = versionRank(b);
  return sa - sb || ma - mb || na - nb || a.localeCompare(b);
}
