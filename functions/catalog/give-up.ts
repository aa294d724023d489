// When the host gives up on a CatalogSource's work, the source says so as upstream's catalog
// operator says a source cannot be served: `status.reason` (ConfigMapError for configmap
// sources, RegistryServerError otherwise) and `status.message` with the error, plus a Warning
// Event of that reason. The next successful pass rewrites both.
import type { CatalogSource } from '../../shared/api/index.js';
import { coreEvent } from '../../shared/kube/events.js';
import { executeWrites } from '../../shared/kube/executor.js';
import type { Served } from '../../shared/kube/served.js';
import type { DeadWork, WorkContext } from '../../shared/runtime/types.js';
import type { NamespacedName } from '../../shared/runtime/work-keys.js';

// definition.ts's catalogFieldManager (imported from there it would close an import cycle).
const fieldManager = 'olmq-catalog';

/** Records the dead work on the CatalogSource `work` names (best effort: the host logs). */
export async function failCatalogSourceOnDeadWork(
  work: WorkContext<NamespacedName>,
  dead: DeadWork,
): Promise<void> {
  const source = await work.client.get<Served<CatalogSource>>({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    namespace: work.key.namespace,
    name: work.key.name,
  });
  if (source === undefined) return;
  const reason =
    source.spec.sourceType === 'configmap' || source.spec.sourceType === 'internal'
      ? 'ConfigMapError'
      : 'RegistryServerError';
  const status = { ...(source.status ?? {}), reason, message: dead.message } as const;
  const event = coreEvent(
    {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      namespace: work.key.namespace,
      name: work.key.name,
      uid: source.metadata.uid,
      resourceVersion: source.metadata.resourceVersion,
    },
    { type: 'Warning', reason, message: dead.message },
    work.now(),
  );
  await executeWrites(
    work.client,
    [
      { op: 'updateStatus', object: { ...source, status } },
      { op: 'event', object: event },
    ],
    fieldManager,
  );
}
