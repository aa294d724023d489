// copy-csv-olmconfig: the OLMConfig `cluster` switch (olmconfig.ts decides): its
// DisabledCopiedCSVs condition and Events, and the AllNamespaces sources whose copies are out
// of line, handed back as copy-csv-source items.
import { getMirrored, listMirrored, namespacesHolding } from '../../shared/bus/mirror-read.js';
import { describeWrite, executeWrites, type Write } from '../../shared/kube/executor.js';
import { kubeTime } from '../../shared/kube/time.js';
import { NamespaceSet, isCopy, type CsvObject } from '../../shared/operator-group/index.js';
import type { FunctionDefinition, WorkContext } from '../../shared/runtime/types.js';
import type { FieldKey } from '../../shared/runtime/work-keys.js';
import { olmConfigKey, sourceKey } from './keys.js';
import { decideOlmConfig, type OlmConfigObject, type OlmConfigSnapshot } from './olmconfig.js';
import { namespaceNames } from './source-definition.js';
import { fieldManager, type CopyCsvContext } from './types.js';

type Key = FieldKey<never>;

/** The copy-csv-olmconfig definition. */
export function olmConfigDefinition(
  context: CopyCsvContext,
): FunctionDefinition<Key, OlmConfigSnapshot | undefined, Write[]> {
  const { mirror, groups, options } = context;

  // Each non-copied CSV of an AllNamespaces group, with the namespaces holding a copy of it.
  const globalSources = async (cluster: string): Promise<OlmConfigSnapshot['sources']> => {
    const globalGroups = (await groups.list(cluster)).filter(
      (g) => new NamespaceSet(g.status?.namespaces ?? []).isAll,
    );
    const sources: OlmConfigSnapshot['sources'] = [];
    for (const group of globalGroups) {
      const csvs = await listMirrored<CsvObject>(mirror, {
        cluster,
        kind: 'ClusterServiceVersion',
        namespace: group.metadata.namespace ?? '',
      });
      for (const csv of csvs.filter((c) => !isCopy(c))) {
        const holding = await namespacesHolding(mirror, {
          cluster,
          kind: 'ClusterServiceVersion',
          name: csv.metadata.name ?? '',
        });
        sources.push({ csv, copies: holding.filter((ns) => ns !== csv.metadata.namespace) });
      }
    }
    return sources;
  };

  const load = async (work: WorkContext<Key>): Promise<OlmConfigSnapshot | undefined> => {
    const { cluster } = work;
    const config = await getMirrored<OlmConfigObject>(mirror, {
      cluster,
      kind: 'OLMConfig',
      namespace: '',
      name: 'cluster',
    });
    if (config === undefined) return undefined;
    const [sources, namespaces, events] = await Promise.all([
      globalSources(cluster),
      namespaceNames(mirror, cluster),
      work.client
        .list({ apiVersion: 'v1', kind: 'Event' }, { fieldSelector: 'reason=DisabledCopiedCSVs' })
        .catch(() => ({ items: [] })),
    ]);
    return {
      config,
      namespaceCount: namespaces.length,
      protectedNamespaces: options.protectedNamespaces,
      sources,
      events: events.items,
      now: kubeTime(work.now()),
    };
  };

  return {
    key: olmConfigKey,
    triggers: [{ kind: 'OLMConfig', workKeys: () => [olmConfigKey.of({})] }],
    load,
    decide(snapshot) {
      if (snapshot === undefined) return { writes: [] };
      const d = decideOlmConfig(snapshot);
      return {
        writes: d.writes,
        enqueue: d.requeueSources.map((s) => sourceKey.of(s)),
        ...(d.recheckAfterMs === undefined ? {} : { requeueAfterMs: d.recheckAfterMs }),
      };
    },
    async apply(writes, work) {
      if (writes.length > 0) work.log.debug({ writes: writes.map(describeWrite) }, 'applying');
      await executeWrites(work.client, writes, fieldManager);
    },
  };
}
