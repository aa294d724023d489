// How a step's object is written into the cluster: the annotation and owner labels upstream
// adds, and the merge of a step's content into an object that exists already.
import type { KubeObject } from '../../../shared/kube/client.js';
import { fnv64aHex } from '../hash.js';

/** Annotation upstream puts on CRDs it creates: which CSV installed them. */
export function installedAlongsideAnnotation(namespace: string, csv: string): [string, string] {
  return [
    `operatorframework.io/installed-alongside-${fnv64aHex(`${namespace}/${csv}`)}`,
    `${namespace}/${csv}`,
  ];
}

/** The owner labels upstream puts on cluster-scoped objects of a CSV. */
export function ownerLabels(csv: string, namespace: string): Record<string, string> {
  return {
    'olm.owner': csv,
    'olm.owner.namespace': namespace,
    'olm.owner.kind': 'ClusterServiceVersion',
  };
}

// object's identity, foreign labels/annotations and owner references stay (a ServiceAccount
// shared across an upgrade keeps both CSVs as owners).
export function mergedUpdate(existing: KubeObject, intended: KubeObject): KubeObject {
  const refs = [...(existing.metadata.ownerReferences ?? [])];
  for (const ref of intended.metadata.ownerReferences ?? []) {
    if (!refs.some((r) => r.uid === ref.uid)) refs.push(ref);
  }
  const merged: KubeObject = {
    ...existing,
    ...intended,
    metadata: {
      ...existing.metadata,
      labels: { ...existing.metadata.labels, ...intended.metadata.labels },
      annotations: { ...existing.metadata.annotations, ...intended.metadata.annotations },
      ...(refs.length === 0 ? {} : { ownerReferences: refs }),
    },
  };
  if (intended.kind === 'Service') {
    // The API server assigns clusterIP(s) and refuses updates that drop them.
    const keep = (existing['spec'] ?? {}) as Record<string, unknown>;
    const spec = { ...((intended['spec'] ?? {}) as Record<string, unknown>) };
    for (const field of ['clusterIP', 'clusterIPs'])
      if (keep[field] !== undefined) spec[field] = keep[field];
    merged['spec'] = spec;
  }
  if (intended.kind === 'ServiceAccount') {
    // Tokens and pull secrets the cluster added stay.
    for (const field of ['secrets', 'imagePullSecrets']) {
      if (intended[field] === undefined && existing[field] !== undefined)
        merged[field] = existing[field];
    }
  }
  return merged;
}
