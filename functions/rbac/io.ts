// Reads and writes the rbac function's definitions have in common: CSVs and objects from the
// mirror, labelled lists from the API, and applying writes (with their metric).
import { getMirrored, listMirrored } from '../../shared/bus/mirror-read.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { describeWrite, executeWrites, type Write } from '../../shared/kube/executor.js';
import { isGlobal, type CsvObject } from '../../shared/operator-group/index.js';
import type { WorkContext } from '../../shared/runtime/types.js';
import { fieldManager, type OperatorGroupObject, type RbacContext } from './types.js';

/** apiVersion of the RBAC kinds. */
export const rbacApi = 'rbac.authorization.k8s.io/v1';

/** One mirrored object of `cluster`, or undefined. */
export const mirrored = <T>(
  context: RbacContext,
  cluster: string,
  kind: string,
  namespace: string,
  name: string,
): Promise<T | undefined> => getMirrored<T>(context.mirror, { cluster, kind, namespace, name });

/** The mirrored CSVs of one namespace. */
export const csvsIn = (
  context: RbacContext,
  cluster: string,
  namespace: string,
): Promise<CsvObject[]> =>
  listMirrored<CsvObject>(context.mirror, { cluster, kind: 'ClusterServiceVersion', namespace });

/** Objects of a kind matching a label selector, from the API (fresh). */
export const listApi = async <T extends KubeObject>(
  client: KubeClient,
  apiVersion: string,
  kind: string,
  namespace: string | undefined,
  labelSelector?: string,
): Promise<T[]> =>
  (
    await client.list<T>(
      { apiVersion, kind, namespace },
      labelSelector === undefined ? {} : { labelSelector },
    )
  ).items;

/** Groups that are all global: their operators' copies get no tenant RBAC. */
export const onlyGlobal = (groups: readonly OperatorGroupObject[]): boolean =>
  groups.length > 0 && groups.every((g) => isGlobal(g.status?.namespaces));

/** Performs a decision's writes with the reconcile's client, and counts them. */
export async function applyWrites(
  context: RbacContext,
  writes: readonly Write[],
  work: Pick<WorkContext<unknown>, 'client' | 'cluster' | 'log'>,
): Promise<void> {
  if (writes.length === 0) return;
  work.log.debug({ writes: writes.map(describeWrite) }, 'applying');
  await executeWrites(work.client, writes, fieldManager);
  for (const w of writes) {
    const kind = 'object' in w ? w.object.kind : w.ref.kind;
    context.written.inc({ cluster: work.cluster, kind, op: w.op });
  }
}
