// copy-csv-source: a non-copied CSV changed; its copies may need a look in every namespace it
// targets or holds a copy in. Writes nothing: the decision hands the host one
// copy-csv-namespace item per such namespace (published in batches), and the OLMConfig check
// for an AllNamespaces operator. Holds no list between items.
import { OlmAnnotation, OlmLabel } from '../../shared/api/codes.js';
import {
  getMirrored,
  mirroredKeys,
  namespacesHolding,
  type MirrorSource,
} from '../../shared/bus/mirror-read.js';
import { decodeToken, encodeToken } from '../../shared/bus/subjects.js';
import { NamespaceSet, isCopy, type CsvObject } from '../../shared/operator-group/index.js';
import type { FunctionDefinition, Trigger } from '../../shared/runtime/types.js';
import type { NamespacedName } from '../../shared/runtime/work-keys.js';
import { nonStatusCopyHashAnnotation } from './copy.js';
import { namespaceKey, olmConfigKey, sourceKey } from './keys.js';
import type { CopyCsvContext } from './types.js';

/** Where a source's copies may live. */
export interface SourceSnapshot {
  /** Namespaces to look at (sorted, without the source's own). */
  namespaces: readonly string[];
  /** The source is an AllNamespaces operator's: the OLMConfig condition counts its copies. */
  global: boolean;
}

/**
 * The CSV trigger of the copy-csv function (one consumer for every CSV change): a copy out of
 * line starts its namespace; any other CSV its source item; a deleted one may have been either.
 */
export const csvTrigger: Trigger = {
  kind: 'ClusterServiceVersion',
  workKeys: (c) => {
    const csv = c.object as CsvObject | undefined;
    const namespace = namespaceKey.of({ namespace: c.ref.namespace });
    const source = sourceKey.of({ namespace: c.ref.namespace, name: c.ref.name });
    // A copy in line (status Copied, as written here) needs no look; a new, edited or deleted
    // one does. This halves the items per copy at scale.
    if (csv !== undefined && isCopy(csv)) return copyInLine(csv) ? [] : [namespace];
    if (csv === undefined) return [namespace, source];
    // The status of a source targeting only its own namespace (an install's several phases) has
    // no copy to reach: copies of it elsewhere went with the change of its targets, which is a
    // metadata change and starts the source.
    if (ownNamespaceOnly(csv) && !c.touches(['metadata', 'spec', 'other'])) return [];
    return [source];
  },
};

// A CSV whose olm.targetNamespaces names no namespace but its own ("" is all), or that has none
// yet (it is no group's member: nothing is copied).
function ownNamespaceOnly(csv: CsvObject): boolean {
  const annotation = csv.metadata.annotations?.[OlmAnnotation.TargetNamespaces];
  return annotation === undefined || annotation === csv.metadata.namespace;
}

/** The copy-csv-source definition. */
export function sourceDefinition(
  context: CopyCsvContext,
): FunctionDefinition<NamespacedName, SourceSnapshot, readonly never[]> {
  const { mirror } = context;
  return {
    key: sourceKey,
    triggers: [csvTrigger],
    // Every namespace a source's copies may live in: its targets (all namespaces for a global
    // group) and wherever a copy of it exists.
    async load(work) {
      const { cluster } = work;
      const { namespace, name } = work.key;
      const [source, holding] = await Promise.all([
        getMirrored<CsvObject>(mirror, { cluster, kind: 'ClusterServiceVersion', namespace, name }),
        namespacesHolding(mirror, { cluster, kind: 'ClusterServiceVersion', name }),
      ]);
      const annotation = source?.metadata.annotations?.[OlmAnnotation.TargetNamespaces];
      const targets = NamespaceSet.fromAnnotation(annotation ?? '');
      const global = annotation !== undefined && targets.isAll;
      const targeted =
        annotation === undefined
          ? []
          : global
            ? await namespaceNames(mirror, cluster)
            : targets.toArray().filter((ns) => ns !== '');
      // A namespace outside the targets matters only if what it holds is a copy of this source
      // (one no longer targeted, to delete): same-named CSVs are often installs of their own.
      const targetedSet = new Set(targeted);
      const copiesElsewhere = await Promise.all(
        holding
          .filter((ns) => ns !== namespace && !targetedSet.has(ns))
          .map(async (ns) => {
            const held = await getMirrored<CsvObject>(mirror, {
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
      return { namespaces, global };
    },
    decide: (s) => ({
      writes: [],
      enqueue: [
        ...s.namespaces.map((namespace) => namespaceKey.of({ namespace })),
        ...(s.global ? [olmConfigKey.of({})] : []),
      ],
    }),
    apply: () => Promise.resolve(),
  };
}

/** The namespaces of `cluster` from the mirror's keys alone (no values): cheap at 10,000. */
export async function namespaceNames(mirror: MirrorSource, cluster: string): Promise<string[]> {
  const out: string[] = [];
  for (const key of await mirroredKeys(mirror, `${encodeToken(cluster)}.Namespace.-.*`)) {
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
