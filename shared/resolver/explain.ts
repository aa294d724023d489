// Facts (the guarded rules of a resolution) and how a minimal conflicting set of them reads to
// a person: per Subscription, what conflicts and what would fix it.
import type { ApiFact, ResolutionProblem, ResolverCatalog, SubscriptionFacts } from './model.js';
import { ResolutionProblemCode } from './model.js';
import { describePredicate, formatApi, type Dependency } from './predicates.js';
import type { BundleVariable } from './variables.js';
import type { Literal } from './sat.js';

interface FactState {
  /** The solver literal that switches the rule on. */
  readonly guard: Literal;
  /** Whether the rule takes part in the next solve. */
  active: boolean;
}

/** One rule of a resolution. */
export type Fact = FactState &
  (
    | {
        readonly kind: 'subscription';
        readonly subscription: SubscriptionFacts;
        readonly candidates: readonly BundleVariable[];
      }
    | { readonly kind: 'mandatory'; readonly variable: BundleVariable }
    | { readonly kind: 'kept'; readonly variable: BundleVariable; readonly subscription: string }
    | {
        readonly kind: 'dependency';
        readonly variable: BundleVariable;
        readonly dependency: Dependency;
        readonly providers: readonly BundleVariable[];
      }
    | { readonly kind: 'prohibited'; readonly variable: BundleVariable; readonly why: string }
    | {
        readonly kind: 'package';
        readonly packageName: string;
        readonly variables: readonly BundleVariable[];
      }
    | { readonly kind: 'api'; readonly api: ApiFact; readonly variables: readonly BundleVariable[] }
  );

/** A Fact without its solver state, as the resolver declares it. */
export type FactSpec = Fact extends infer F
  ? F extends Fact
    ? Omit<F, 'guard' | 'active'>
    : never
  : never;

const maxFactsShown = 12;

/** What explanations need to know about the resolution. */
export interface ExplainContext {
  readonly namespace: string;
  readonly catalogs: readonly ResolverCatalog[];
}

/** "name (channel in catalog)" or "name (installed)". */
export function describeVariable(v: BundleVariable): string {
  if (v.candidate.kind === 'existing') return `${v.name} (installed)`;
  return `${v.name} (channel ${v.candidate.channel} of catalog ${v.candidate.catalog.namespace}/${v.candidate.catalog.name})`;
}

function list(items: readonly string[]): string {
  if (items.length === 0) return 'none';
  if (items.length === 1) return items[0] as string;
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1] as string}`;
}

function catalogList(ctx: ExplainContext): string {
  const names = ctx.catalogs.map((c) => `${c.namespace}/${c.name}`);
  return names.length === 0 ? 'no catalog' : names.join(', ');
}

/** The variables of a core that other facts of it mention (to show who competes in an at-most-one rule). */
function mentioned(core: readonly Fact[]): Set<BundleVariable> {
  const out = new Set<BundleVariable>();
  for (const f of core) {
    if (f.kind === 'subscription') f.candidates.forEach((c) => out.add(c));
    else if (f.kind === 'dependency') {
      out.add(f.variable);
      f.providers.forEach((p) => out.add(p));
    } else if (f.kind === 'mandatory' || f.kind === 'kept' || f.kind === 'prohibited') {
      out.add(f.variable);
    }
  }
  return out;
}

/** One fact as a sentence, in upstream's wording where it has one. */
export function describeFact(f: Fact, core: readonly Fact[], ctx: ExplainContext): string {
  switch (f.kind) {
    case 'subscription':
      return `subscription ${f.subscription.name} requires at least one of ${list(f.candidates.map(describeVariable))}`;
    case 'mandatory':
      return `clusterserviceversion ${f.variable.name} exists and is not referenced by a subscription`;
    case 'kept':
      return `clusterserviceversion ${f.variable.name} stays installed because subscription ${f.subscription} is not resolved`;
    case 'dependency': {
      const what = `bundle ${f.variable.name} requires an operator ${describePredicate(f.dependency.predicate)}`;
      const message =
        f.dependency.failureMessage === null ? '' : ` ("${f.dependency.failureMessage}")`;
      if (f.providers.length === 0) {
        return `${what}${message}, and no operator in ${catalogList(ctx)} or installed in namespace ${ctx.namespace} provides one`;
      }
      return `${what}${message}: ${list(f.providers.map(describeVariable))}`;
    }
    case 'prohibited':
      return f.why;
    case 'package': {
      const here = mentioned(core);
      const names = f.variables.filter((v) => here.has(v)).map(describeVariable);
      return `there can be only one operator from package ${f.packageName}${names.length > 1 ? `, but ${list(names).replace(/ or ([^,]*)$/, ' and $1')} are all needed` : ''}`;
    }
    case 'api': {
      const here = mentioned(core);
      const names = f.variables.filter((v) => here.has(v)).map(describeVariable);
      return `there can be only one provider of ${formatApi(f.api)}${names.length > 1 ? `, but ${names.join(' and ')} both provide it` : ''}`;
    }
  }
}

/** Turns a minimal unsatisfiable set of facts into problems: one per Subscription in it, or one for the namespace. */
export function explainConflict(core: readonly Fact[], ctx: ExplainContext): ResolutionProblem[] {
  const facts = core.map((f) => describeFact(f, core, ctx));
  // Messages stay readable: a deep chain's conflict can span hundreds of facts (all are in `facts`).
  const shown =
    facts.length <= maxFactsShown
      ? facts.join('; ')
      : `${facts.slice(0, maxFactsShown).join('; ')}; and ${facts.length - maxFactsShown} more`;
  const subs = core.filter((f) => f.kind === 'subscription');
  const unavailable = ctx.catalogs.filter((c) => c.index === null);
  const unavailableNote =
    unavailable.length === 0
      ? ''
      : ` (catalog ${unavailable.map((c) => `${c.namespace}/${c.name}`).join(', ')} is unavailable and might provide it)`;
  if (subs.length === 0) {
    const kept = core.filter((f) => f.kind === 'kept');
    const message = `the installed operators already break a resolution rule: ${shown}. Fix or remove one of these ClusterServiceVersions; other Subscriptions resolve as if this rule did not apply`;
    if (kept.length > 0) {
      return kept.map((f) => ({
        subscription: f.kind === 'kept' ? f.subscription : null,
        code: ResolutionProblemCode.ConstraintsNotSatisfiable,
        message,
        facts,
      }));
    }
    return [
      { subscription: null, code: ResolutionProblemCode.InstalledStateConflict, message, facts },
    ];
  }
  return subs.map((s) => {
    if (s.kind !== 'subscription') throw new Error('unreachable');
    const name = s.subscription.name;
    const others = subs
      .filter((o) => o !== s)
      .map((o) => (o.kind === 'subscription' ? o.subscription.name : ''));
    const missing = core.find((f) => f.kind === 'dependency' && f.providers.length === 0);
    const mandatory = core.filter((f) => f.kind === 'mandatory' || f.kind === 'kept');
    const prohibited = core.filter((f) => f.kind === 'prohibited');
    let headline: string;
    let fix: string;
    if (s.candidates.length === 0) {
      headline = `subscription ${name} has no installable bundle in ${s.subscription.channel === null ? 'the channels' : `channel ${s.subscription.channel}`} of package ${s.subscription.package} (the channel has no head)`;
      fix = 'Subscribe to another channel, or fix the catalog.';
    } else if (missing !== undefined && missing.kind === 'dependency') {
      headline = `subscription ${name} cannot be satisfied: bundle ${missing.variable.name} requires an operator ${describePredicate(missing.dependency.predicate)}, which no catalog visible to namespace ${ctx.namespace} (${catalogList(ctx)}) provides${unavailableNote}`;
      fix =
        'Add a CatalogSource that provides it, or subscribe to a channel or version that does not need it.';
    } else if (others.length > 0) {
      const rules = core
        .filter((f) => f.kind === 'package' || f.kind === 'api')
        .map((f) => describeFact(f, core, ctx));
      headline = `subscriptions ${name} and ${list(others).replace(/ or ([^,]*)$/, ' and $1')} need incompatible operators${rules.length > 0 ? `: ${rules.join('; ')}` : ''}`;
      fix =
        'Remove one of these Subscriptions, or change their channels or versions so they agree.';
    } else if (mandatory.length > 0) {
      const csvs = mandatory.map((f) =>
        f.kind === 'mandatory' || f.kind === 'kept' ? f.variable.name : '',
      );
      const standalone = mandatory.some((f) => f.kind === 'mandatory');
      headline = `subscription ${name} conflicts with clusterserviceversion ${list(csvs).replace(/ or ([^,]*)$/, ' and $1')}${standalone ? ', installed in the namespace without a Subscription' : ', kept installed for a Subscription that could not be resolved'}`;
      fix = standalone
        ? `Delete that ClusterServiceVersion, or let a Subscription own it (its status.installedCSV names it) so it can be upgraded.`
        : 'Fix the other Subscription first.';
    } else if (prohibited.length > 0) {
      headline = `subscription ${name} cannot be satisfied: ${prohibited.map((f) => describeFact(f, core, ctx)).join('; ')}`;
      fix = 'Subscribe to a channel or version whose bundles are usable.';
    } else {
      headline = `subscription ${name} cannot be satisfied`;
      fix =
        'Change the Subscription (channel, startingCSV) or the catalogs so the rules above can all hold.';
    }
    return {
      subscription: name,
      code: ResolutionProblemCode.ConstraintsNotSatisfiable,
      message: `${headline}. Conflicting facts: ${shown}. ${fix}`,
      facts,
    };
  });
}
