// Whole-catalog checks of the real community catalog (105 MB of FBC, 333 packages), too large
// for the repository: it loads with the counts its README states, and every package resolves
// alone or explains a missing dependency. The tests cover the same code on the packages kept in
// test/fixtures/catalogs; this run is the check against the full catalog.
// Run (after `npm run build`):
//   node dist/bench/catalog-real.js [--catalog DIR]   (default ../shared/catalogs/operatorhub)
// Prints one JSON object: timings, totals, and each check with expected and actual values;
// exits 1 when a check fails. The README counts are checked only for the default catalog.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadCatalogDirectory, type CatalogBuildResult } from '../shared/catalog/index.js';
import { resolveNamespace, type SubscriptionFacts } from '../shared/resolver/index.js';

const defaultDir = fileURLToPath(new URL('../../../shared/catalogs/operatorhub', import.meta.url));
const { values } = parseArgs({ options: { catalog: { type: 'string' } } });
const dir = values.catalog ?? defaultDir;

function totals(result: CatalogBuildResult) {
  const { index } = result;
  const entries = index.channels.flatMap((c) => c.entries);
  let skips = 0;
  let skipsOutside = 0;
  for (const c of index.channels) {
    const names = new Set(c.entries.map((e) => e.name));
    for (const e of c.entries) {
      skips += e.skips.length;
      skipsOutside += e.skips.filter((name) => !names.has(name)).length;
    }
  }
  const deps = index.bundles.flatMap((b) => b.dependencies);
  return {
    packages: index.packages.length,
    channels: index.channels.length,
    bundles: index.bundles.length,
    entries: entries.length,
    replaces: entries.filter((e) => e.replaces !== null).length,
    skipRanges: entries.filter((e) => e.skipRange !== null).length,
    skips,
    skipsOutside,
    packageRequirements: deps.filter((d) => d.type === 'olm.package').length,
    gvkRequirements: deps.filter((d) => d.type === 'olm.gvk').length,
    bundlesWithoutCsv: index.bundles.filter((b) => b.installModes === null).length,
  };
}

/** The README of catalogs/operatorhub: its totals and the warnings its data produces. */
const readme = {
  totals: {
    packages: 333,
    channels: 628,
    bundles: 6467,
    entries: 9819,
    replaces: 9053,
    skipRanges: 1276,
    skips: 758,
    skipsOutside: 216,
    packageRequirements: 151,
    gvkRequirements: 115,
    bundlesWithoutCsv: 0,
  },
  warnings: {
    'replaces-not-in-channel': 22,
    'skips-not-in-channel': 117,
    'channel-stranded-entries': 10,
  },
};

function sub(name: string): SubscriptionFacts {
  return {
    name,
    package: name,
    channel: null,
    source: { name: 'operatorhub', namespace: 'olm' },
    startingCSV: null,
    installedCSV: null,
  };
}

const t0 = performance.now();
const result = await loadCatalogDirectory(dir);
const loadMs = performance.now() - t0;
const { index } = result;
const catalogs = [{ name: 'operatorhub', namespace: 'olm', priority: 0, index }];
const resolve = (subs: SubscriptionFacts[]) =>
  resolveNamespace({
    namespace: 'operators',
    subscriptions: subs,
    installed: [],
    operatorGroups: null,
    catalogs,
  });

// Every package alone: it resolves to a bundle for its Subscription, or every problem is one of
// the explained kinds (a missing dependency, no operators, nothing installable, deprecated).
const explained = /requires an operator|no operators found|has no installable bundle|is deprecated/;
const unexplained: string[] = [];
let resolved = 0;
const t1 = performance.now();
for (const p of index.packages) {
  const r = resolve([sub(p.name)]);
  if (r.status === 'resolved') {
    resolved++;
    if (r.bundles[0]?.subscription !== p.name) unexplained.push(`${p.name}: no bundle`);
  } else if (!r.problems.every((q) => explained.test(q.message))) {
    unexplained.push(`${p.name}: ${r.problems.map((q) => q.message).join(' | ')}`);
  }
}
const everyPackageMs = performance.now() - t1;

// 25 Subscriptions in one namespace resolve together, each to its default channel head.
const names = index.packages
  .filter((p) => !p.name.startsWith('ack-'))
  .slice(0, 25)
  .map((p) => p.name);
const together = resolve(names.map(sub));
const forSubs = together.bundles.filter((b) => b.subscription !== null);
const notHead = forSubs
  .filter((b) => b.name !== index.defaultHead(b.package)?.name)
  .map((b) => b.package);

const warnings: Record<string, number> = {};
for (const w of result.warnings) warnings[w.code] = (warnings[w.code] ?? 0) + 1;
const counts = totals(result);
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const checks: Record<string, { expected: unknown; actual: unknown; ok: boolean }> = {};
const check = (name: string, expected: unknown, actual: unknown, ok = same(expected, actual)) => {
  checks[name] = { expected, actual, ok };
};
if (dir === defaultDir) {
  check('readme totals', readme.totals, counts);
  check('readme warnings', readme.warnings, warnings);
}
check('every package resolves or explains', [], unexplained);
check('most packages resolve alone', '> 300', resolved, resolved > 300);
check('25 together: a bundle or a problem each', 25, forSubs.length + together.problems.length);
check('25 together: default channel heads', [], notHead);

const failed = Object.entries(checks).filter(([, c]) => !c.ok);
process.stdout.write(
  `${JSON.stringify(
    {
      bench: 'catalog-real',
      catalog: dir,
      loadMs: Math.round(loadMs),
      everyPackageResolveMs: Math.round(everyPackageMs),
      totals: counts,
      warnings,
      resolvedAlone: resolved,
      checks,
      failed: failed.map(([name]) => name),
    },
    null,
    2,
  )}\n`,
);
process.exit(failed.length === 0 ? 0 : 1);
