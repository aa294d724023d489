// Operators already serving a namespace from elsewhere. An operator installed for all (or several)
// namespaces has a copied CSV in each namespace it serves. Resolution leaves copies out (as
// upstream does), so a Subscription in a served namespace to the same package would resolve to a
// bundle whose CSV name is taken by the copy, or whose APIs the other operator already owns
// there. Such a Subscription cannot install; this says so, instead of leaving it silent.
import type { Resolution, ResolutionProblem, ResolvedBundle } from './model.js';
import { ResolutionProblemCode } from './model.js';

/** A copied CSV in the namespace being resolved. */
export interface CopiedCsvFacts {
  /** The CSV's name (the same as the original's). */
  readonly name: string;
  /** Its package (from the operatorframework.io/properties annotation), when known. */
  readonly package: string | null;
  /** The namespace of the original CSV (label olm.copiedFrom). */
  readonly copiedFrom: string;
}

function servedBy(
  b: ResolvedBundle,
  copies: readonly CopiedCsvFacts[],
): CopiedCsvFacts | undefined {
  return copies.find((c) => c.name === b.name || (c.package !== null && c.package === b.package));
}

/**
 * The resolution with every Subscription whose package is already served to the namespace by a
 * copied CSV turned into a problem; its bundle (and dependencies only it needed) dropped.
 */
export function withoutProvidedElsewhere(
  resolution: Resolution,
  namespace: string,
  copies: readonly CopiedCsvFacts[],
): Resolution {
  if (copies.length === 0) return resolution;
  const problems: ResolutionProblem[] = [];
  const dropped = new Set<ResolvedBundle>();
  for (const b of resolution.bundles) {
    if (b.subscription === null || b.action === 'keep') continue;
    const copy = servedBy(b, copies);
    if (copy === undefined) continue;
    dropped.add(b);
    problems.push({
      subscription: b.subscription,
      code: ResolutionProblemCode.ConstraintsNotSatisfiable,
      message:
        `subscription ${b.subscription} requires ${b.name} of package ${b.package}, but ` +
        `${copy.name} installed in namespace ${copy.copiedFrom} already serves namespace ` +
        `${namespace} (copied CSV ${namespace}/${copy.name}); installing it here too would ` +
        `conflict. Use the operator from ${copy.copiedFrom}, or delete subscription ` +
        `${b.subscription}`,
      facts: [
        `subscription ${b.subscription} requires ${b.name}`,
        `clusterserviceversion ${copy.name} from namespace ${copy.copiedFrom} already serves ${namespace}`,
      ],
    });
  }
  if (dropped.size === 0) return resolution;
  // Dependencies without a Subscription stay only while a remaining bundle still needs one:
  // the dropped bundles were the only reason to install those no remaining bundle requires.
  const kept = resolution.bundles.filter((b) => !dropped.has(b));
  const needed = new Set<string>();
  const provides = (d: ResolvedBundle, by: ResolvedBundle): boolean => {
    const apis = new Set(
      (d.bundle?.providedApis ?? []).map((a) => `${a.group}/${a.version}/${a.kind}`),
    );
    return (
      (by.bundle?.requiredApis ?? []).some((a) => apis.has(`${a.group}/${a.version}/${a.kind}`)) ||
      (by.bundle?.dependencies ?? []).some(
        (x) =>
          (x.type === 'olm.package' && x.packageName === d.package) ||
          (x.type === 'olm.gvk' && apis.has(`${x.group}/${x.version}/${x.kind}`)),
      )
    );
  };
  const queue = kept.filter((b) => b.subscription !== null || b.action === 'keep');
  for (const b of queue) needed.add(b.name);
  for (let i = 0; i < queue.length; i++) {
    const by = queue[i] as ResolvedBundle;
    for (const d of kept) {
      if (!needed.has(d.name) && provides(d, by)) {
        needed.add(d.name);
        queue.push(d);
      }
    }
  }
  return {
    ...resolution,
    status: 'unsatisfiable',
    bundles: kept.filter((b) => needed.has(b.name)),
    problems: [...resolution.problems, ...problems],
  };
}
