// Discovery documents: /version, /api, /apis, per group and version, and the aggregated
// (apidiscovery.k8s.io v2 / v2beta1) form kubectl asks for first.
import type { JsonObject } from '../../shared/kube/json.js';
import { apiVersionOf, type ResourceRegistry } from '../resources/registry.js';
import type { ResourceType } from '../resources/types.js';

/** The /version document for a Kubernetes version such as "v1.30.6". */
export function versionInfo(gitVersion: string): JsonObject {
  const match = /^v(\d+)\.(\d+)/.exec(gitVersion);
  return {
    major: match?.[1] ?? '1',
    minor: match?.[2] ?? '30',
    gitVersion,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z',
    goVersion: 'go1.22.8',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}

function subresourcesOf(type: ResourceType): { name: string; kind: string; verbs: string[] }[] {
  const out: { name: string; kind: string; verbs: string[] }[] = [];
  if (type.statusSubresource)
    out.push({ name: 'status', kind: type.kind, verbs: ['get', 'patch', 'update'] });
  if (type.scale) out.push({ name: 'scale', kind: 'Scale', verbs: ['get', 'patch', 'update'] });
  for (const extra of type.extraSubresources) {
    if (extra === 'token') out.push({ name: 'token', kind: 'TokenRequest', verbs: ['create'] });
    else if (extra === 'finalize')
      out.push({ name: 'finalize', kind: 'Namespace', verbs: ['update'] });
  }
  return out;
}

/** APIResourceList of one group/version. */
export function resourceList(
  registry: ResourceRegistry,
  group: string,
  version: string,
): JsonObject | undefined {
  const types = registry.all().filter((t) => t.group === group && t.version === version);
  if (types.length === 0) return undefined;
  const resources: JsonObject[] = [];
  for (const type of types.sort((a, b) => a.resource.localeCompare(b.resource))) {
    const entry: JsonObject = {
      name: type.resource,
      singularName: type.singular,
      namespaced: type.namespaced,
      kind: type.kind,
      verbs: [...type.verbs],
    };
    if (type.shortNames.length > 0) entry['shortNames'] = [...type.shortNames];
    if (type.categories.length > 0) entry['categories'] = [...type.categories];
    resources.push(entry);
    for (const sub of subresourcesOf(type)) {
      resources.push({
        name: `${type.resource}/${sub.name}`,
        singularName: '',
        namespaced: type.namespaced,
        kind: sub.kind,
        verbs: sub.verbs,
        ...(sub.kind === 'Scale' ? { group: 'autoscaling', version: 'v1' } : {}),
      });
    }
  }
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: apiVersionOf(group, version),
    resources,
  };
}

/** /api (APIVersions). */
export function coreVersions(serverAddress: string): JsonObject {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function apiGroup(group: string, versions: string[]): JsonObject {
  const list = versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
  return { name: group, versions: list, preferredVersion: list[0] ?? {} };
}

/** /apis (APIGroupList, without the core group). */
export function groupList(registry: ResourceRegistry): JsonObject {
  const groups = registry
    .groups()
    .filter((g) => g.group !== '')
    .sort((a, b) => a.group.localeCompare(b.group))
    .map((g) => apiGroup(g.group, g.versions));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

/** /apis/<group> (APIGroup), or undefined when the group is not served. */
export function groupDocument(registry: ResourceRegistry, group: string): JsonObject | undefined {
  const found = registry.groups().find((g) => g.group === group);
  if (!found || group === '') return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(group, found.versions) };
}

/** The aggregated discovery version a client accepts, from its Accept header. */
export function aggregatedVersionAccepted(
  accept: string | undefined,
): 'v2' | 'v2beta1' | undefined {
  if (!accept) return undefined;
  for (const part of accept.split(',')) {
    if (!part.includes('as=APIGroupDiscoveryList') || !part.includes('g=apidiscovery.k8s.io'))
      continue;
    if (!part.trim().startsWith('application/json')) continue;
    if (/v=v2beta1/.test(part)) return 'v2beta1';
    if (/v=v2(;|$|\s)/.test(part)) return 'v2';
  }
  return undefined;
}

/** The aggregated discovery document (APIGroupDiscoveryList) of the core group or of /apis. */
export function aggregatedDiscovery(
  registry: ResourceRegistry,
  core: boolean,
  version: 'v2' | 'v2beta1',
): JsonObject {
  const groups = registry
    .groups()
    .filter((g) => (core ? g.group === '' : g.group !== ''))
    .sort((a, b) => a.group.localeCompare(b.group));
  const items = groups.map((g) => ({
    metadata: { name: g.group, creationTimestamp: null },
    versions: g.versions.map((v) => ({
      version: v,
      resources: registry
        .all()
        .filter((t) => t.group === g.group && t.version === v)
        .sort((a, b) => a.resource.localeCompare(b.resource))
        .map((t) => {
          const entry: JsonObject = {
            resource: t.resource,
            responseKind: { group: t.group, version: t.version, kind: t.kind },
            scope: t.namespaced ? 'Namespaced' : 'Cluster',
            singularResource: t.singular,
            verbs: [...t.verbs],
          };
          if (t.shortNames.length > 0) entry['shortNames'] = [...t.shortNames];
          if (t.categories.length > 0) entry['categories'] = [...t.categories];
          const subs = subresourcesOf(t);
          if (subs.length > 0) {
            entry['subresources'] = subs.map((s) => ({
              subresource: s.name,
              responseKind:
                s.kind === 'Scale'
                  ? { group: 'autoscaling', version: 'v1', kind: 'Scale' }
                  : s.kind === 'TokenRequest'
                    ? { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' }
                    : { group: t.group, version: t.version, kind: s.kind },
              verbs: s.verbs,
            }));
          }
          return entry;
        }),
      freshness: 'Current',
    })),
  }));
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items,
  };
}

/** Content-Type of an aggregated discovery response. */
export function aggregatedContentType(version: 'v2' | 'v2beta1'): string {
  return `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;
}
