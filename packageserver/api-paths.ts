// The paths of the packages.operators.coreos.com/v1 API: its discovery documents and the
// parsing of a resource path into namespace, name, subresource and watch.
import {
  packageManifestKind,
  packagesApiVersion,
  packagesGroup,
  packagesResource,
  packagesVersion,
  type JsonMap,
} from './manifest.js';

/** "packagemanifests.packages.operators.coreos.com", as messages name the resource. */
export const groupResource = `${packagesResource}.${packagesGroup}`;

/** The APIResourceList of packages.operators.coreos.com/v1. */
export function packagesResourceList(): JsonMap {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: packagesApiVersion,
    resources: [
      {
        name: packagesResource,
        singularName: 'packagemanifest',
        namespaced: true,
        kind: packageManifestKind,
        verbs: ['get', 'list', 'watch'],
      },
      {
        name: `${packagesResource}/icon`,
        singularName: '',
        namespaced: true,
        kind: packageManifestKind,
        verbs: ['get'],
      },
    ],
  };
}

/** The APIGroup of packages.operators.coreos.com, as /apis lists it. */
export function apiGroup(): JsonMap {
  const version = { groupVersion: packagesApiVersion, version: packagesVersion };
  return { name: packagesGroup, versions: [version], preferredVersion: version };
}

/** A parsed request path of this API. */
export interface ApiPath {
  namespace: string | undefined;
  name: string | undefined;
  subresource: string;
  watch: boolean;
}

/** The API path of `pathname`: 'discovery' for the group version, undefined when not of this API. */
export function parsePath(pathname: string): ApiPath | 'discovery' | undefined {
  const prefix = `/apis/${packagesGroup}/${packagesVersion}`;
  if (pathname === prefix || pathname === `${prefix}/`) return 'discovery';
  if (!pathname.startsWith(`${prefix}/`)) return undefined;
  let parts = pathname
    .slice(prefix.length + 1)
    .split('/')
    .filter((p) => p !== '')
    .map((p) => decodeURIComponent(p));
  let watch = false;
  if (parts[0] === 'watch') {
    watch = true;
    parts = parts.slice(1);
  }
  let namespace: string | undefined;
  if (parts[0] === 'namespaces' && parts.length >= 3) {
    namespace = parts[1];
    parts = parts.slice(2);
  }
  const [resource, name, subresource, ...rest] = parts;
  if (resource !== packagesResource || rest.length > 0) return undefined;
  return { namespace, name, subresource: subresource ?? '', watch };
}
