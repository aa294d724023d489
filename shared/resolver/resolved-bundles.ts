// The resolver's output: the bundle picked for each Subscription and the dependencies it pulls
// in, and warnings about install modes the OperatorGroup needs and a bundle lacks.
import { sameCatalog } from './catalog-order.js';
import type {
  OperatorGroupFacts,
  ResolutionProblem,
  ResolutionWarning,
  ResolvedBundle,
  ResolverCatalog,
} from './model.js';
import type { SubscriptionCandidates } from './subscription-candidates.js';
import type { BundleVariable } from './variables.js';

/** What the output is read from. */
export interface PickedContext {
  readonly catalogs: readonly ResolverCatalog[];
  /** Installed CSVs' variables. */
  readonly existing: readonly BundleVariable[];
  readonly subscriptions: Iterable<SubscriptionCandidates>;
  readonly problems: readonly ResolutionProblem[];
}

/** Per Subscription without a problem its picked bundle, then the picked dependencies by id. */
export function resolvedBundles(
  picked: Set<BundleVariable>,
  context: PickedContext,
): ResolvedBundle[] {
  const out: ResolvedBundle[] = [];
  const claimed = new Set<BundleVariable>();
  const failed = new Set(context.problems.map((p) => p.subscription));
  const subs = [...context.subscriptions].sort((a, b) => (a.sub.name < b.sub.name ? -1 : 1));
  for (const { sub, candidates, current } of subs) {
    if (failed.has(sub.name)) continue;
    const pick = candidates.find((c) => picked.has(c));
    if (pick === undefined) continue;
    claimed.add(pick);
    if (pick.candidate.kind === 'existing') {
      const catalog = context.catalogs.find((c) => sameCatalog(c, sub.source));
      const bundle = catalog?.index?.getBundle(sub.package, pick.name) ?? null;
      out.push({
        package: pick.package ?? sub.package,
        name: pick.name,
        version: pick.versionText,
        catalog: { name: sub.source.name, namespace: sub.source.namespace },
        channel: sub.channel,
        subscription: sub.name,
        action: 'keep',
        replaces: null,
        startingCSV: false,
        bundle,
      });
      continue;
    }
    out.push(
      resolved(
        pick,
        sub.name,
        current?.name ?? null,
        sub.startingCSV === pick.name && current === null,
      ),
    );
  }
  const deps = [...picked]
    .filter((v) => v.candidate.kind === 'catalog' && !claimed.has(v))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  for (const v of deps) {
    // A dependency of a package already installed (and not picked) upgrades that CSV.
    const replaced = context.existing.find((e) => e.package === v.package && !picked.has(e));
    out.push(resolved(v, null, replaced?.name ?? null, false));
  }
  return out;
}

function resolved(
  v: BundleVariable,
  subscription: string | null,
  replaces: string | null,
  startingCSV: boolean,
): ResolvedBundle {
  if (v.candidate.kind !== 'catalog') throw new Error('resolver: not a catalog bundle');
  const { catalog, channel, bundle } = v.candidate;
  return {
    package: bundle.package,
    name: bundle.name,
    version: bundle.version,
    catalog: { name: catalog.name, namespace: catalog.namespace },
    channel,
    subscription,
    action: replaces === null ? 'install' : 'upgrade',
    replaces,
    startingCSV,
    bundle,
  };
}

/**
 * Upstream does not filter by install mode; the CSV fails later with UnsupportedOperatorGroup.
 * Say so early: a warning per bundle to install that lacks the OperatorGroup's install mode.
 */
export function installModeWarnings(
  bundles: readonly ResolvedBundle[],
  operatorGroups: readonly OperatorGroupFacts[] | null,
): ResolutionWarning[] {
  const warnings: ResolutionWarning[] = [];
  const mode = operatorGroups?.[0]?.installMode;
  if (mode === undefined) return warnings;
  for (const b of bundles) {
    const modes = b.bundle?.installModes;
    if (b.action === 'keep' || modes === null || modes === undefined) continue;
    if (modes.some((m) => m.type === mode && m.supported)) continue;
    warnings.push({
      subscription: b.subscription,
      message: `bundle ${b.name} does not support install mode ${mode} of OperatorGroup ${operatorGroups?.[0]?.name ?? ''}; its ClusterServiceVersion will fail with UnsupportedOperatorGroup`,
    });
  }
  return warnings;
}
