// What wakes the operator function's two definitions: which parts of a component each one
// reads, which Operators a change concerns, and which namespaces' adoption a CRD concerns.
import { codes } from '../../shared/api/index.js';
import type { ObjectPart } from '../../shared/bus/object-parts.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { ObjectChange } from '../../shared/runtime/types.js';
import { operatorNames } from '../../shared/api/component-labels.js';

// The namespaces whose adoption may still label a CRD: those of the CSVs it was installed
// alongside (install's annotation `ns/csv`) that no component label of the CRD names yet. A
// CRD shared by an operator installed in many namespaces changes with every one of them; each
// change waking every namespace's adoption would make a burst of installs quadratic.
export function crdNamespaces(o: KubeObject): string[] {
  // An Operator is `<package>.<namespace>`, and a namespace has no dot; a name cut short to fit
  // a label names no namespace here, so that namespace is woken.
  const labelled = new Set(
    operatorNames(o.metadata.labels).map((n) => n.slice(n.lastIndexOf('.') + 1)),
  );
  return Object.entries(o.metadata.annotations ?? {}).flatMap(([k, v]) => {
    if (!k.startsWith(codes.OlmAnnotationPrefix.InstalledAlongside)) return [];
    const namespace = v.split('/')[0] ?? '';
    return labelled.has(namespace) ? [] : [namespace];
  });
}

// What the Operator's status shows of a component: its labels and conditions (a CSV's phase).
export function statusParts(kind: string): ObjectPart[] {
  return kind === 'ClusterServiceVersion'
    ? [
        'metadata',
        'components',
        'status.phase',
        'status.reason',
        'status.message',
        'status.lastUpdateTime',
        'status.lastTransitionTime',
      ]
    : ['metadata', 'components', 'status.conditions'];
}

// What adoption reads of an object: labels and owners, a Subscription's package and what it
// installed, a CSV's owned CRDs.
export function adoptionParts(kind: string): ObjectPart[] {
  if (kind === 'Subscription')
    return ['metadata', 'components', 'spec', 'status.installedCSV', 'status.installPlanRef'];
  return kind === 'ClusterServiceVersion'
    ? ['metadata', 'components', 'spec']
    : ['metadata', 'components'];
}

/**
 * The Operators each object was last seen a component of, by this replica: a label added to a
 * CRD shared by an operator installed in N namespaces then wakes one Operator, not N. Bounded,
 * oldest first; an object not remembered wakes every Operator it is a component of, and those
 * whose status lists it. Replicas share the trigger's consumer, so what one remembers may miss
 * a change another saw, as with Trigger.parts.
 */
const keyOf = (ref: ObjectChange['ref']): string =>
  `${ref.cluster}/${ref.kind}/${ref.namespace}/${ref.name}`;

export class Memberships {
  private readonly seen = new Map<string, readonly string[]>();
  constructor(private readonly limit = 100_000) {}

  /** Records `now` for the object and returns what was recorded before. */
  swap(ref: ObjectChange['ref'], now: readonly string[]): readonly string[] | undefined {
    const key = keyOf(ref);
    const then = this.seen.get(key);
    this.seen.delete(key);
    this.seen.set(key, now);
    if (this.seen.size > this.limit) {
      const oldest = this.seen.keys().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
    return then;
  }

  /** A deleted object. */
  forget(ref: ObjectChange['ref']): void {
    this.seen.delete(keyOf(ref));
  }
}

const symmetricDifference = (a: readonly string[], b: readonly string[]): string[] => [
  ...a.filter((x) => !b.includes(x)),
  ...b.filter((x) => !a.includes(x)),
];

/**
 * The Operators a change of a live component wakes, from the Operators it is a component of
 * `now` and was `then` (undefined: not remembered). What their status shows of it changed: every
 * one it is or was a component of; else only those that gained or lost it.
 */
export function wokenOperators(
  now: readonly string[],
  then: readonly string[] | undefined,
  change: Pick<ObjectChange, 'touches'>,
  shown: readonly ObjectPart[],
): readonly string[] {
  if (then === undefined) return change.touches(shown) ? now : [];
  // The status shows no labels: with the memberships known, a change of labels alone concerns
  // only the Operators that gained or lost the object (a CRD shared by N installs gains a label
  // at each, which must not wake the other N - 1).
  return change.touches(shown.filter((p) => p !== 'metadata' && p !== 'components'))
    ? [...new Set([...now, ...then])]
    : symmetricDifference(now, then);
}
