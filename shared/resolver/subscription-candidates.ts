// A Subscription's candidates in preference order (channels, replaces chain, upgrade edges from
// its installed CSV, startingCSV), or the problem saying why it has none.
import type { CatalogChannelEntry } from '../catalog/index.js';
import { catalogKeyText, sameCatalog } from './catalog-order.js';
import { channelChain, skipRangeOf } from './channel-chain.js';
import type { ResolutionProblem, ResolverCatalog, SubscriptionFacts } from './model.js';
import { ResolutionProblemCode } from './model.js';
import type { VariableTable } from './variable-table.js';
import type { BundleVariable } from './variables.js';

/** A Subscription with its candidates, the installed CSV last when it has one. */
export interface SubscriptionCandidates {
  readonly sub: SubscriptionFacts;
  readonly candidates: BundleVariable[];
  readonly current: BundleVariable | null;
}

/** What finding candidates needs of the resolution. */
export interface CandidateContext {
  readonly namespace: string;
  readonly catalogs: readonly ResolverCatalog[];
  readonly variables: VariableTable;
}

/** The candidates of `sub` in preference order, or why it has none. */
export function subscriptionCandidates(
  sub: SubscriptionFacts,
  context: CandidateContext,
): Omit<SubscriptionCandidates, 'sub'> | { problem: ResolutionProblem } {
  const problem = (
    code: ResolutionProblemCode,
    message: string,
  ): { problem: ResolutionProblem } => ({
    problem: { subscription: sub.name, code, message, facts: [] },
  });
  const catalog = context.catalogs.find((c) => sameCatalog(c, sub.source));
  const current = context.variables.currentOf(sub);
  const where = `${sub.source.name} in namespace ${sub.source.namespace}`;
  if (catalog === undefined || (catalog.index !== null && catalog.index.bundles.length === 0)) {
    const visible = context.catalogs.map((c) => catalogKeyText(c)).join(', ');
    return problem(
      ResolutionProblemCode.NoCandidates,
      `no operators found from catalog ${where} referenced by subscription ${sub.name}` +
        (catalog === undefined
          ? `; no such CatalogSource is visible to namespace ${context.namespace} (visible: ${visible === '' ? 'none' : visible}). Fix spec.source/spec.sourceNamespace or create the CatalogSource.`
          : '; the catalog is empty.'),
    );
  }
  if (catalog.index === null) {
    return problem(
      ResolutionProblemCode.CatalogUnavailable,
      `catalog source ${catalog.namespace}/${catalog.name} referenced by subscription ${sub.name} is unavailable` +
        `${catalog.unavailableReason === undefined ? '' : `: ${catalog.unavailableReason}`}; the subscription resolves again once the catalog is healthy.`,
    );
  }
  const index = catalog.index;
  const pkg = index.getPackage(sub.package);
  if (pkg === undefined) {
    const near = index.packages
      .map((p) => p.name)
      .filter((n) => n.includes(sub.package) || sub.package.includes(n))
      .slice(0, 5);
    return problem(
      ResolutionProblemCode.NoCandidates,
      `no operators found in package ${sub.package} in the catalog referenced by subscription ${sub.name}; catalog ${catalog.namespace}/${catalog.name} has no package ${sub.package}` +
        (near.length > 0 ? ` (similar: ${near.join(', ')})` : '') +
        '. Fix spec.name.',
    );
  }
  if (sub.channel !== null && index.getChannel(sub.package, sub.channel) === undefined) {
    return problem(
      ResolutionProblemCode.NoCandidates,
      `no operators found in channel ${sub.channel} of package ${sub.package} in the catalog referenced by subscription ${sub.name}; its channels are ${pkg.channels.join(', ')}` +
        `${pkg.defaultChannel === null ? '' : ` (default ${pkg.defaultChannel})`}. Fix spec.channel.`,
    );
  }
  let channels = sub.channel === null ? [...pkg.channels] : [sub.channel];
  // Default channel first, then channel names.
  channels.sort((a, b) =>
    a === pkg.defaultChannel ? -1 : b === pkg.defaultChannel ? 1 : a < b ? -1 : a > b ? 1 : 0,
  );
  const starting = current === null ? sub.startingCSV : null;
  if (starting !== null) {
    channels = channels.filter((c) =>
      index.getChannel(sub.package, c)?.entries.some((e) => e.name === starting),
    );
    if (channels.length === 0) {
      return problem(
        ResolutionProblemCode.NoCandidates,
        `no operators found with name ${starting} in channel ${sub.channel ?? ''} of package ${sub.package} in the catalog referenced by subscription ${sub.name}. Fix spec.startingCSV.`,
      );
    }
  }
  const candidates: BundleVariable[] = [];
  for (const channel of channels) {
    let entries: readonly CatalogChannelEntry[];
    if (starting !== null) {
      entries =
        index.getChannel(sub.package, channel)?.entries.filter((e) => e.name === starting) ?? [];
    } else {
      entries = channelChain(index, sub.package, channel);
    }
    if (current !== null) {
      const name = current.name;
      const version = current.version;
      entries = entries.filter((e) => {
        if (e.replaces === name || e.skips.includes(name)) return true;
        const range = skipRangeOf(index, e);
        return range !== null && version !== null && range.test(version);
      });
    }
    for (const entry of entries) {
      const bundle = index.getBundle(sub.package, entry.name);
      if (bundle === undefined) continue;
      const v = context.variables.catalog({ kind: 'catalog', catalog, channel, entry, bundle });
      if (!candidates.includes(v)) candidates.push(v);
    }
  }
  if (current !== null) candidates.push(current);
  return { candidates, current };
}
