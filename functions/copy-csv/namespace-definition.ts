// copy-csv-namespace: the copies of one namespace (create, update, delete), decided by
// copy.ts. Where every fan-out lands, so 10,000 namespaces are 10,000 small independent items.
import { OlmAnnotation, OlmLabel } from '../../shared/api/codes.js';
import { getMirrored, listMirrored } from '../../shared/bus/mirror-read.js';
import { describeWrite, executeWrites, type Write } from '../../shared/kube/executor.js';
import {
  NamespaceSet,
  isCopy,
  type CsvObject,
  type OperatorGroupLike,
} from '../../shared/operator-group/index.js';
import type { FunctionDefinition, WorkContext } from '../../shared/runtime/types.js';
import type { FieldKey } from '../../shared/runtime/work-keys.js';
import { decideNamespaceCopies, groupOfSource, type NamespaceCopySnapshot } from './copy.js';
import { FullObjectCache } from './full-object-cache.js';
import { namespaceKey } from './keys.js';
import type { OlmConfigObject } from './olmconfig.js';
import { fieldManager, type CopyCsvContext } from './types.js';

/** The writes of one namespace, and the copies they make, update and delete (for metrics). */
export interface NamespaceCopyWrites {
  kube: Write[];
  copies: { created: number; updated: number; deleted: number };
}

type Key = FieldKey<'namespace'>;

/** The copy-csv-namespace definition. */
export function namespaceDefinition(
  context: CopyCsvContext,
): FunctionDefinition<Key, NamespaceCopySnapshot, NamespaceCopyWrites> {
  const { mirror, groups, options, copiesWritten } = context;
  // Mirrored CSVs lack icon and description; copies carry the parent's full spec, read from the
  // API once per parent resourceVersion.
  const fullCsvs = new FullObjectCache<CsvObject>(256);
  const csvsIn = (cluster: string, namespace: string) =>
    listMirrored<CsvObject>(mirror, { cluster, kind: 'ClusterServiceVersion', namespace });

  // The parents of the copies present, by "<namespace>/<name>".
  const parentsOf = async (
    cluster: string,
    present: readonly CsvObject[],
  ): Promise<Map<string, CsvObject>> => {
    const parents = new Map<string, CsvObject>();
    await Promise.all(
      present
        .filter((c) => c.metadata.labels?.[OlmLabel.CopiedFrom] !== undefined)
        .map(async (copy) => {
          const parentNs = copy.metadata.annotations?.[OlmAnnotation.OperatorNamespace];
          if (parentNs === undefined) return;
          const name = copy.metadata.name ?? '';
          const parent = await getMirrored<CsvObject>(mirror, {
            cluster,
            kind: 'ClusterServiceVersion',
            namespace: parentNs,
            name,
          });
          if (parent !== undefined) parents.set(`${parentNs}/${name}`, parent);
        }),
    );
    return parents;
  };

  // Non-copied CSVs of the groups targeting the namespace, in full when they are members.
  const candidatesFor = async (
    work: WorkContext<Key>,
    groupList: readonly OperatorGroupLike[],
  ): Promise<CsvObject[]> => {
    const { namespace } = work.key;
    const targeting = new Set(
      groupList
        .filter(
          (g) =>
            g.metadata.namespace !== namespace &&
            new NamespaceSet(g.status?.namespaces ?? []).contains(namespace),
        )
        .map((g) => g.metadata.namespace ?? ''),
    );
    const candidates = (await Promise.all([...targeting].map((ns) => csvsIn(work.cluster, ns))))
      .flat()
      .filter((c) => !isCopy(c));
    const full = await Promise.all(
      candidates.map((c) =>
        groupOfSource(c, groupList) === undefined
          ? Promise.resolve(c)
          : fullCsvs.get(work.client, c),
      ),
    );
    return full.filter((c): c is CsvObject => c !== undefined);
  };

  return {
    key: namespaceKey,
    triggers: [
      { kind: 'Namespace', workKeys: (c) => [namespaceKey.of({ namespace: c.ref.name })] },
    ],
    async load(work) {
      const { cluster } = work;
      const { namespace } = work.key;
      const [ns, olmConfig, groupList, present] = await Promise.all([
        getMirrored<{ status?: { phase?: string } }>(mirror, {
          cluster,
          kind: 'Namespace',
          namespace: '',
          name: namespace,
        }),
        getMirrored<OlmConfigObject>(mirror, {
          cluster,
          kind: 'OLMConfig',
          namespace: '',
          name: 'cluster',
        }),
        groups.list(cluster),
        csvsIn(cluster, namespace),
      ]);
      const [candidates, parents] = await Promise.all([
        candidatesFor(work, groupList),
        parentsOf(cluster, present),
      ]);
      return {
        namespace,
        namespaceActive: ns !== undefined && ns.status?.phase !== 'Terminating',
        copiesEnabled: olmConfig?.spec?.features?.disableCopiedCSVs !== true,
        protectedNamespaces: options.protectedNamespaces,
        groups: groupList,
        candidates,
        present,
        parents,
      };
    },
    decide(snapshot) {
      const d = decideNamespaceCopies(snapshot);
      return {
        writes: {
          kube: d.writes,
          copies: { created: d.created, updated: d.updated, deleted: d.deleted.length },
        },
      };
    },
    async apply(writes, work) {
      if (writes.kube.length > 0)
        work.log.debug({ writes: writes.kube.map(describeWrite) }, 'applying');
      await executeWrites(work.client, writes.kube, fieldManager);
      for (const [operation, n] of Object.entries(writes.copies))
        if (n > 0) copiesWritten.inc({ cluster: work.cluster, operation }, n);
    },
  };
}
