// PackageManifests as kubectl shows them: a meta.k8s.io/v1 Table with Name, Catalog and Age.
import type { JsonMap } from './manifest.js';

/** The content type of a Table answer. */
export const tableContentType = 'application/json;as=Table;v=v1;g=meta.k8s.io';

/** Age as kubectl prints it (apimachinery's HumanDuration). */
export function humanDuration(seconds: number): string {
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${Math.floor(seconds)}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10)
    return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${Math.floor(seconds % 60)}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (days < 365 * 2) return `${days}d`;
  return `${Math.floor(days / 365)}y`;
}

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
