// A channel's replaces chain from its head and its entries' parsed skipRanges, cached per
// catalog index (indexes are immutable).
import semver from 'semver';
import type { CatalogChannelEntry, CatalogIndex } from '../catalog/index.js';
import { skipRangeOptions } from '../catalog/index.js';

// Per index: the replaces chain of each channel, and parsed skipRanges (the index is immutable).
const chains = new WeakMap<CatalogIndex, Map<string, readonly CatalogChannelEntry[]>>();
const ranges = new WeakMap<CatalogIndex, Map<string, semver.Range | null>>();

/** The channel's entries along the replaces chain from its head, skipped entries left out (upstream sortChannel). */
export function channelChain(
  index: CatalogIndex,
  pkg: string,
  channel: string,
): readonly CatalogChannelEntry[] {
  let byIndex = chains.get(index);
  if (byIndex === undefined) {
    byIndex = new Map<string, readonly CatalogChannelEntry[]>();
    chains.set(index, byIndex);
  }
  const key = `${pkg}\u0000${channel}`;
  const known = byIndex.get(key);
  if (known !== undefined) return known;
  const c = index.getChannel(pkg, channel);
  const chain: CatalogChannelEntry[] = [];
  if (c !== undefined && c.head !== null) {
    const byName = new Map(c.entries.map((e) => [e.name, e]));
    const skipped = new Set<string>();
    for (const e of c.entries) for (const s of e.skips) if (byName.has(s)) skipped.add(s);
    const visited = new Set<string>();
    let current = byName.get(c.head);
    while (current !== undefined && !visited.has(current.name)) {
      visited.add(current.name);
      if (!skipped.has(current.name)) chain.push(current);
      current = current.replaces === null ? undefined : byName.get(current.replaces);
    }
  }
  byIndex.set(key, chain);
  return chain;
}

/** The entry's skipRange, parsed once per index; null when it has none or it does not parse. */
export function skipRangeOf(index: CatalogIndex, entry: CatalogChannelEntry): semver.Range | null {
  if (entry.skipRange === null) return null;
  let byIndex = ranges.get(index);
  if (byIndex === undefined) {
    byIndex = new Map<string, semver.Range | null>();
    ranges.set(index, byIndex);
  }
  const known = byIndex.get(entry.skipRange);
  if (known !== undefined) return known;
  let range: semver.Range | null;
  try {
    range = new semver.Range(entry.skipRange, skipRangeOptions);
  } catch {
    range = null; // reported when the index was built; matches nothing
  }
  byIndex.set(entry.skipRange, range);
  return range;
}
