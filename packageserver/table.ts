// PackageManifests as kubectl shows them: a meta.k8s.io/v1 Table with Name, Catalog and Age.
import { humanDuration } from '../shared/kube/time.js';
import type { JsonMap } from './manifest.js';

/** The content type of a Table answer. */
export const tableContentType = 'application/json;as=Table;v=v1;g=meta.k8s.io';

export { humanDuration };

/** A manifest's metadata. */
export function metadataOf(manifest: JsonMap): JsonMap {
  return manifest['metadata'] as JsonMap;
}

/** A meta.k8s.io/v1 Table of PackageManifests: Name, Catalog (display name), Age, as upstream. */
export function packageTable(
  manifests: readonly JsonMap[],
  resourceVersion: string,
  includeObject: string,
  now: number,
): JsonMap {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion },
    columnDefinitions: [
      {
        name: 'Name',
        type: 'string',
        format: 'name',
        description: 'Name must be unique within a namespace.',
        priority: 0,
      },
      {
        name: 'Catalog',
        type: 'string',
        format: '',
        description: 'The source catalog for this package',
        priority: 0,
      },
      {
        name: 'Age',
        type: 'string',
        format: '',
        description:
          'CreationTimestamp is a timestamp representing the server time when this object was created.',
        priority: 0,
      },
    ],
    rows: manifests.map((manifest) => {
      const metadata = metadataOf(manifest);
      const status = manifest['status'] as JsonMap;
      const created = metadata['creationTimestamp'];
      const age =
        typeof created === 'string'
          ? humanDuration((now - Date.parse(created)) / 1000)
          : '<unknown>';
      const row: JsonMap = {
        cells: [metadata['name'] ?? '', status['catalogSourceDisplayName'] ?? '', age],
      };
      if (includeObject === 'Object') row['object'] = manifest;
      else if (includeObject !== 'None')
        row['object'] = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata };
      return row;
    }),
  };
}
