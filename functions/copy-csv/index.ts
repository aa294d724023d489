// The copy-csv function: copied CSVs in every namespace an operator's group targets, and the
// OLMConfig switch that turns them off for AllNamespaces operators.
//
// Work keys (all per cluster):
// - ["namespace", ns]: the copies of one namespace (create, update, delete). This is where the
//   fan-out lands, so 10,000 namespaces are 10,000 small independent items.
// - ["source", ns, name]: a non-copied CSV changed; fans out ["namespace", x] for every
//   namespace it targets or holds a copy in, in batches. Holds no list between items.
// - ["olmconfig"]: the DisabledCopiedCSVs condition and Events, and a fan-out to global sources.
import { Counter, type Registry } from 'prom-client';
import type { Backbone } from '../../shared/bus/backbone.js';
import {
  getMirrored,
  listMirrored,
  mirroredKeys,
  namespacesHolding,
} from '../../shared/bus/mirror-read.js';
import { lazyMirrorView } from '../../shared/bus/mirror-view.js';
import { decodeToken, encodeToken, workSubject, type WorkKey } from '../../shared/bus/subjects.js';
import type { KubeClient } from '../../shared/kube/client.js';
import { executeWrites, type Write } from '../../shared/kube/executor.js';
import { OlmLabel } from '../../shared/api/codes.js';
import type {
  Decision,
  FunctionDefinition,
  WorkContext,
} from '../../shared/runtime/function-host.js';
import type { CreateFunction } from '../../shared/runtime/function-module.js';
import { NamespaceSet, type OperatorGroupLike } from '../../shared/operator-group/index.js';
import {
  decideNamespaceCopies,
  groupOfSource,
  isCopy,
  nonStatusCopyHashAnnotation,
  type CsvObject,
  type NamespaceCopySnapshot,
} from './copy.js';
import { decideOlmConfig, type OlmConfigObject, type OlmConfigSnapshot } from './olmconfig.js';
import { FullObjectCache } from './full-object-cache.js';

/** Name of the function (and of its consumers). */
export const copyCsvFunctionName = 'copy-csv';
const fieldManager = 'olmq-copy-csv';

type Snapshot =
  | { type: 'namespace'; state: NamespaceCopySnapshot }
  | { type: 'fanout'; namespaces: string[]; alsoOlmConfig: boolean }
  | { type: 'olmconfig'; state: OlmConfigSnapshot }
  | { type: 'none' };

interface Writes {
  kube: Write[];
  /** Work keys of this function to (re)queue. */
  requeue: WorkKey[];
  /** Counts for metrics. */
  copies: { created: number; updated: number; deleted: number };
}

const noWrites = (): Writes => ({
  kube: [],
  requeue: [],
  copies: { created: 0, updated: 0, deleted: 0 },
});

/** Options of the copy-csv function. */
export interface CopyCsvOptions {
  /** Namespaces keeping copies of AllNamespaces operators when copies are disabled (upstream --protectedCopiedCSVNamespaces). */
  protectedNamespaces: readonly string[];
  /** Work items published at once when fanning out. */
  fanoutBatch: number;
}

/** The copy-csv definition over `clients`. */
export function copyCsvFunction(
  backbone: Backbone,
  clients: ReadonlyMap<string, KubeClient>,
  registry: Registry,
  options: CopyCsvOptions = { protectedNamespaces: [], fanoutBatch: 512 },
): FunctionDefinition<Snapshot, Writes> & { close(): void } {
  const clientOf = (cluster: string): KubeClient => {
    const client = clients.get(cluster);
    if (client === undefined) throw new Error(`no client for cluster ${cluster}`);
    return client;
  };
  const written =
    (registry.getSingleMetric('olmq_copied_csv_writes_total') as
      Counter<'cluster' | 'operation'> | undefined) ??
    new Counter({
      name: 'olmq_copied_csv_writes_total',
      help: 'Copied CSVs created, updated and deleted.',
      labelNames: ['cluster', 'operation'],
      registers: [registry],
    });
  // Mirrored CSVs lack icon and description; copies carry the parent's full spec, read from the
  // API once per parent resourceVersion.
  const fullCsvs = new FullObjectCache<CsvObject>(256);
  // Every namespace's reconcile reads every group of the cluster (who targets it): a live view.
  const groups = lazyMirrorView<OperatorGroupLike>(backbone, 'OperatorGroup');

  const loadNamespace = async (work: WorkContext, namespace: string): Promise<Snapshot> => {
    const { cluster } = work;
    const [ns, olmConfig, groupList, present] = await Promise.all([
      getMirrored<{ status?: { phase?: string } }>(backbone, {
        cluster,
        kind: 'Namespace',
        namespace: '',
        name: namespace,
      }),
      getMirrored<OlmConfigObject>(backbone, {
        cluster,
        kind: 'OLMConfig',
        namespace: '',
        name: 'cluster',
      }),
      groups.list(cluster),
      listMirrored<CsvObject>(backbone, {
        cluster,
        kind: 'ClusterServiceVersion',
        namespace,
      }),
    ]);
    const targeting = new Set(
      groupList
        .filter(
          (g) =>
            g.metadata.namespace !== namespace &&
            new NamespaceSet(g.status?.namespaces ?? []).contains(namespace),
        )
        .map((g) => g.metadata.namespace ?? ''),
    );
    const candidates = (
      await Promise.all(
        [...targeting].map((ns) =>
          listMirrored<CsvObject>(backbone, {
            cluster,
            kind: 'ClusterServiceVersion',
            namespace: ns,
          }),
        ),
      )
    )
      .flat()
      .filter((c) => !isCopy(c));
    const full = await Promise.all(
      candidates.map((c) =>
        groupOfSource(c, groupList) === undefined
          ? Promise.resolve(c)
          : fullCsvs.get(clientOf(cluster), c),
      ),
    );
    const parents = new Map<string, CsvObject>();
    await Promise.all(
      present
        .filter((c) => c.metadata.labels?.[OlmLabel.CopiedFrom] !== undefined)
        .map(async (copy) => {
          const parentNs = copy.metadata.annotations?.['olm.operatorNamespace'];
          if (parentNs === undefined) return;
          const parent = await getMirrored<CsvObject>(backbone, {
            cluster,
            kind: 'ClusterServiceVersion',
            namespace: parentNs,
            name: copy.metadata.name ?? '',
          });
          if (parent !== undefined) parents.set(`${parentNs}/${copy.metadata.name ?? ''}`, parent);
        }),
    );
    return {
      type: 'namespace',
      state: {
        namespace,
        namespaceActive: ns !== undefined && ns.status?.phase !== 'Terminating',
        copiesEnabled: olmConfig?.spec?.features?.disableCopiedCSVs !== true,
        protectedNamespaces: options.protectedNamespaces,
        groups: groupList,
        candidates: full.filter((c): c is CsvObject => c !== undefined),
        present,
        parents,
      },
    };
  };

  // Every namespace a source's copies may live in: its targets (all namespaces for a global
  // group) and wherever a copy of its name exists.
  const loadSource = async (
    work: WorkContext,
    namespace: string,
    name: string,
  ): Promise<Snapshot> => {
    const { cluster } = work;
    const source = await getMirrored<CsvObject>(backbone, {
      cluster,
      kind: 'ClusterServiceVersion',
      namespace,
      name,
    });
    const holding = await namespacesHolding(backbone, {
      cluster,
      kind: 'ClusterServiceVersion',
      name,
    });
    const targets = NamespaceSet.fromAnnotation(
      source?.metadata.annotations?.['olm.targetNamespaces'] ?? '',
    );
    let targeted: string[] = [];
    const annotated = source?.metadata.annotations?.['olm.targetNamespaces'] !== undefined;
    if (source !== undefined && annotated && targets.isAll) {
      const all = await listNamespaceNames(backbone, cluster);
      targeted = all;
    } else if (source !== undefined && annotated) {
      targeted = targets.toArray().filter((ns) => ns !== '');
    }
    // A namespace outside the targets matters only if what it holds is a copy of this source
    // (one no longer targeted, to delete): same-named CSVs are often installs of their own.
    const targetedSet = new Set(targeted);
    const copiesElsewhere = await Promise.all(
      holding
        .filter((ns) => ns !== namespace && !targetedSet.has(ns))
        .map(async (ns) => {
          const held = await getMirrored<CsvObject>(backbone, {
            cluster,
            kind: 'ClusterServiceVersion',
            namespace: ns,
            name,
          });
          return held?.metadata.labels?.[OlmLabel.CopiedFrom] === namespace ? [ns] : [];
        }),
    );
    const namespaces = [...new Set([...targeted, ...copiesElsewhere.flat()])]
      .filter((ns) => ns !== namespace)
      .sort();
    return {
      type: 'fanout',
      namespaces,
      alsoOlmConfig: source !== undefined && annotated && targets.isAll,
    };
  };

  const loadOlmConfig = async (work: WorkContext): Promise<Snapshot> => {
    const { cluster } = work;
    const config = await getMirrored<OlmConfigObject>(backbone, {
      cluster,
      kind: 'OLMConfig',
      namespace: '',
      name: 'cluster',
    });
    if (config === undefined) return { type: 'none' };
    const globalGroups = (await groups.list(cluster)).filter(
      (g) => new NamespaceSet(g.status?.namespaces ?? []).isAll,
    );
    const namespaces = await listNamespaceNames(backbone, cluster);
    const sources: OlmConfigSnapshot['sources'] = [];
    for (const group of globalGroups) {
      const csvs = (
        await listMirrored<CsvObject>(backbone, {
          cluster,
          kind: 'ClusterServiceVersion',
          namespace: group.metadata.namespace ?? '',
        })
      ).filter((c) => !isCopy(c));
      for (const csv of csvs) {
        const copies = (
          await namespacesHolding(backbone, {
            cluster,
            kind: 'ClusterServiceVersion',
            name: csv.metadata.name ?? '',
          })
        ).filter((ns) => ns !== csv.metadata.namespace);
        sources.push({ csv, copies });
      }
    }
    const events = await clientOf(cluster)
      .list({ apiVersion: 'v1', kind: 'Event' }, { fieldSelector: 'reason=DisabledCopiedCSVs' })
      .catch(() => ({ items: [] }));
    return {
      type: 'olmconfig',
      state: {
        config,
        namespaceCount: namespaces.length,
        protectedNamespaces: options.protectedNamespaces,
        sources,
        events: events.items,
        now: new Date().toISOString(),
      },
    };
  };

  return {
    close: () => groups.stop(),
    name: copyCsvFunctionName,
    triggers: [
      { kind: 'Namespace', workKeys: (c) => [['namespace', c.ref.name]] },
      {
        kind: 'ClusterServiceVersion',
        workKeys: (c) => {
          const csv = c.object as CsvObject | undefined;
          // A copy in line (status Copied, as written here) needs no look; a new, edited or
          // deleted one does. This halves the items per copy at scale.
          if (csv !== undefined && isCopy(csv))
            return copyInLine(csv) ? [] : [['namespace', c.ref.namespace]];
          // A deleted object may have been either: its namespace, and its copies elsewhere.
          if (csv === undefined)
            return [
              ['namespace', c.ref.namespace],
              ['source', c.ref.namespace, c.ref.name],
            ];
          return [['source', c.ref.namespace, c.ref.name]];
        },
      },
      { kind: 'OLMConfig', workKeys: () => [['olmconfig']] },
    ],
    async load(work) {
      const [type, a = '', b = ''] = work.key;
      switch (type) {
        case 'namespace':
          return loadNamespace(work, a);
        case 'source':
          return loadSource(work, a, b);
        case 'olmconfig':
          return loadOlmConfig(work);
        default:
          return { type: 'none' };
      }
    },
    decide(snapshot): Decision<Writes> {
      switch (snapshot.type) {
        case 'none':
          return { writes: noWrites() };
        case 'fanout':
          return {
            writes: {
              ...noWrites(),
              requeue: [
                ...snapshot.namespaces.map((ns) => ['namespace', ns]),
                ...(snapshot.alsoOlmConfig ? [['olmconfig']] : []),
              ],
            },
          };
        case 'namespace': {
          const d = decideNamespaceCopies(snapshot.state);
          return {
            writes: {
              kube: d.writes,
              requeue: [],
              copies: { created: d.created, updated: d.updated, deleted: d.deleted.length },
            },
          };
        }
        case 'olmconfig': {
          const d = decideOlmConfig(snapshot.state);
          return {
            writes: {
              ...noWrites(),
              kube: d.writes,
              requeue: d.requeueSources.map((s) => ['source', s.namespace, s.name]),
            },
            ...(d.recheckAfterMs === undefined ? {} : { requeueAfterMs: d.recheckAfterMs }),
          };
        }
      }
    },
    async apply(writes, work) {
      if (writes.kube.length > 0 || writes.requeue.length > 0) {
        work.log.debug(
          {
            writes: writes.kube.map(
              (w) =>
                `${w.op} ${'object' in w ? `${w.object.kind} ${w.object.metadata.namespace ?? ''}/${w.object.metadata.name ?? ''}` : `${w.ref.kind} ${w.ref.namespace ?? ''}/${w.ref.name ?? ''}`}`,
            ),
            requeue: writes.requeue.length,
          },
          'applying',
        );
      }
      await executeWrites(clientOf(work.cluster), writes.kube, fieldManager);
      for (const [operation, n] of Object.entries(writes.copies))
        if (n > 0) written.inc({ cluster: work.cluster, operation }, n);
      for (let i = 0; i < writes.requeue.length; i += options.fanoutBatch) {
        await Promise.all(
          writes.requeue
            .slice(i, i + options.fanoutBatch)
            .map((key) => backbone.js.publish(workSubject(copyCsvFunctionName, work.cluster, key))),
        );
      }
    },
  };
}

// Namespace names from the mirror's keys alone (no values): cheap at 10,000 namespaces.
async function listNamespaceNames(backbone: Backbone, cluster: string): Promise<string[]> {
  const out: string[] = [];
  for (const key of await mirroredKeys(backbone, `${encodeToken(cluster)}.Namespace.-.*`)) {
    const token = key.split('.')[3];
    if (token !== undefined) out.push(decodeToken(token));
  }
  return out;
}

// A copy carrying its hash annotation whose status says Copied, or has no status yet (the
// create this function just made; the status write follows in the same reconcile, which is
// redelivered if it fails), is in line: its own writes are no reason to look again.
function copyInLine(copy: CsvObject): boolean {
  return (
    (copy.status === undefined || copy.status.reason === 'Copied') &&
    copy.metadata.annotations?.[nonStatusCopyHashAnnotation] !== undefined
  );
}

/** The copy-csv function module. */
export const createFunction: CreateFunction = (context) => {
  const definition = copyCsvFunction(context.backbone, context.clients, context.registry);
  return Promise.resolve({
    definitions: [definition],
    close: () => Promise.resolve(definition.close()),
  });
};
