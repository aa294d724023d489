// The Subscription's deprecation conditions, from the catalog's olm.deprecations: PackageDeprecated,
// ChannelDeprecated and BundleDeprecated for the installed CSV's entry in the Subscription's
// catalog, and the Deprecated roll-up. Upstream OLM v0.26.0 has none of this; it follows the
// newest upstream (catalog/subscription/reconciler.go, updateDeprecatedStatus): conditions True
// with the catalog's message and no reason, updated only when a message changes, the channel one
// only when the Subscription names a channel, removed when the catalog no longer says so.
import type { Subscription, SubscriptionCondition } from '../../shared/api/index.js';
import { codes } from '../../shared/api/index.js';
import type { CatalogIndex } from '../../shared/catalog/index.js';

const { SubscriptionConditionType: Type } = codes;

/** What the catalog says of the installed CSV's package, channel and bundle (null: nothing). */
export interface DeprecationNotices {
  package: string | null;
  channel: string | null;
  bundle: string | null;
}

/**
 * The notices for `installedCSV` of the Subscription, read from its catalog's index; undefined
 * when the catalog does not list that CSV in the Subscription's package (and channel, if named):
 * the conditions are then left as they are, as upstream does.
 */
export function deprecationNotices(
  sub: Subscription,
  installedCSV: string | undefined,
  index: CatalogIndex | null,
): DeprecationNotices | undefined {
  if (index === null || installedCSV === undefined || installedCSV === '') return undefined;
  const pkg = index.getPackage(sub.spec.name);
  if (pkg === undefined) return undefined;
  const named = sub.spec.channel ?? '';
  const channels = named === '' ? pkg.channels : [named];
  const channel = channels
    .map((c) => index.getChannel(pkg.name, c))
    .find((c) => c?.entries.some((e) => e.name === installedCSV) === true);
  if (channel === undefined) return undefined;
  return {
    package: pkg.deprecation,
    channel: named === '' ? null : channel.deprecation,
    bundle: index.getBundle(pkg.name, installedCSV)?.deprecation ?? null,
  };
}

const levels = [
  [Type.PackageDeprecated, 'package'],
  [Type.ChannelDeprecated, 'channel'],
  [Type.BundleDeprecated, 'bundle'],
] as const;

/** The conditions with the deprecation conditions brought up to date with `notices`. */
export function withDeprecations(
  conditions: readonly SubscriptionCondition[],
  notices: DeprecationNotices | undefined,
  now: string,
): SubscriptionCondition[] {
  if (notices === undefined) return [...conditions];
  let next = [...conditions];
  let changed = false;
  const messages: string[] = [];
  for (const [type, level] of levels) {
    const message = notices[level];
    const old = next.find((c) => c.type === type);
    if (message !== null) {
      messages.push(message);
      if (old?.message !== message) {
        next = [
          ...next.filter((c) => c.type !== type),
          { type, status: 'True', message, lastTransitionTime: now },
        ];
        changed = true;
      }
    } else if (old !== undefined) {
      next = next.filter((c) => c.type !== type);
      changed = true;
    }
  }
  if (!changed) return next;
  next = next.filter((c) => c.type !== Type.Deprecated);
  if (messages.length > 0) {
    next.push({
      type: Type.Deprecated,
      status: 'True',
      message: messages.join('; '),
      lastTransitionTime: now,
    });
  }
  return next;
}
