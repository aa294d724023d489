// Aggregated groups in discovery: /apis entries of their APIServices and, once a backend has
// answered its APIResourceList, its resources in aggregated discovery (apidiscovery v2).
import { isJsonObject, type JsonObject, type JsonValue } from '../../shared/kube/json.js';
import type { Backend } from './types.js';

function text(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

function sortByVersionPriority(backends: Backend[]): Backend[] {
  return [...backends].sort(
    (a, b) => b.versionPriority - a.versionPriority || a.version.localeCompare(b.version),
  );
}

/** The APIGroup entry of an aggregated group: its versions by priority, the first preferred. */
export function groupEntry(group: string, backends: Backend[]): JsonObject {
  const versions = sortByVersionPriority(backends).map((b) => ({
    groupVersion: `${group}/${b.version}`,
    version: b.version,
  }));
  return { name: group, versions, preferredVersion: versions[0] ?? {} };
}

/** APIGroupDiscovery entries for groups whose backends answered their last check (`lists` by APIService name). */
export function aggregatedItems(
  backends: Backend[],
  lists: ReadonlyMap<string, JsonObject>,
): JsonObject[] {
  const items: JsonObject[] = [];
  for (const group of [...new Set(backends.map((b) => b.group))].sort()) {
    const versions: JsonObject[] = [];
    for (const backend of sortByVersionPriority(backends.filter((b) => b.group === group))) {
      const list = lists.get(backend.name);
      if (list === undefined) continue;
      const resources = Array.isArray(list['resources'])
        ? list['resources'].filter(isJsonObject)
        : [];
      versions.push({
        version: backend.version,
        resources: resources
          .filter((r) => !text(r['name']).includes('/'))
          .map((r) => {
            const name = text(r['name']);
            const entry: JsonObject = {
              resource: name,
              responseKind: { group, version: backend.version, kind: text(r['kind']) },
              scope: r['namespaced'] === true ? 'Namespaced' : 'Cluster',
              singularResource: text(r['singularName']) || name,
              verbs: Array.isArray(r['verbs']) ? r['verbs'] : [],
            };
            if (Array.isArray(r['shortNames']) && r['shortNames'].length > 0)
              entry['shortNames'] = r['shortNames'];
            if (Array.isArray(r['categories']) && r['categories'].length > 0)
              entry['categories'] = r['categories'];
            const subresources = resources
              .filter((s) => text(s['name']).startsWith(`${name}/`))
              .map((s) => ({
                subresource: text(s['name']).slice(name.length + 1),
                responseKind: { group, version: backend.version, kind: text(s['kind']) },
                verbs: Array.isArray(s['verbs']) ? s['verbs'] : [],
              }));
            if (subresources.length > 0) entry['subresources'] = subresources;
            return entry;
          }),
        freshness: 'Current',
      });
    }
    if (versions.length > 0)
      items.push({ metadata: { name: group, creationTimestamp: null }, versions });
  }
  return items;
}
