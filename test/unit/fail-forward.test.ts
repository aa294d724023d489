// OperatorGroup upgradeStrategy TechPreviewUnsafeFailForward: which CSVs resolution steps over,
// and the resolve decision upgrading a Failed CSV (upstream's fail_forward.go and csv source).
import t from 'tap';
import type { ClusterServiceVersion, OperatorGroup, Subscription } from '../../shared/api/index.js';
import { buildCatalogFromTexts } from '../../shared/catalog/index.js';
import { decideResolve, type ResolveSnapshot } from '../../functions/resolve/decide.js';
import {
  failForwardEnabled,
  lastInReplacementChain,
  replacedByFailure,
  replacedByUpgrade,
  replacementMapping,
} from '../../shared/resolver/index.js';

const csv = (name: string, phase: string, replaces?: string): ClusterServiceVersion =>
  ({
    metadata: {
      name,
      namespace: 'ns',
      annotations: {
        'operatorframework.io/properties': JSON.stringify({
          properties: [
            {
              type: 'olm.package',
              value: { packageName: 'ff', version: name.replace('ff.v', '') },
            },
          ],
        }),
      },
    },
    spec: {
      displayName: name,
      install: { strategy: 'deployment' },
      version: name.replace('ff.v', ''),
      ...(replaces === undefined ? {} : { replaces }),
    },
    status: { phase },
  }) as unknown as ClusterServiceVersion;

const group = (upgradeStrategy?: string): OperatorGroup =>
  ({
    metadata: { name: 'og', namespace: 'ns' },
    spec: upgradeStrategy === undefined ? {} : { upgradeStrategy },
    status: { namespaces: [''], lastUpdated: null },
  }) as unknown as OperatorGroup;

void t.test('fail forward - enabled only by one group asking for it', (t) => {
  t.equal(failForwardEnabled([group('TechPreviewUnsafeFailForward')]), true);
  t.equal(failForwardEnabled([group('Default')]), false);
  t.equal(failForwardEnabled([group()]), false);
  t.equal(failForwardEnabled([]), false);
  t.equal(
    failForwardEnabled([
      group('TechPreviewUnsafeFailForward'),
      group('TechPreviewUnsafeFailForward'),
    ]),
    false,
  );
  t.end();
});

void t.test('fail forward - Replacing CSVs whose chain ends in a Failed CSV step aside', (t) => {
  const v1 = csv('ff.v0.1.0', 'Replacing');
  const v2 = csv('ff.v0.2.0', 'Replacing', 'ff.v0.1.0');
  const v3 = csv('ff.v0.3.0', 'Failed', 'ff.v0.2.0');
  t.same([...replacedByFailure([v1, v2, v3])].sort(), ['ff.v0.1.0', 'ff.v0.2.0']);
  t.same([...replacedByFailure([v1, csv('ff.v0.2.0', 'Installing', 'ff.v0.1.0')])], []);
  t.same(
    [
      ...replacedByFailure([
        csv('ff.v0.1.0', 'Succeeded'),
        v3,
        csv('ff.v0.2.0', 'Failed', 'ff.v0.1.0'),
      ]),
    ],
    [],
    'a chain with a CSV not Replacing before its end',
  );
  const loop = [csv('a', 'Replacing', 'b'), csv('b', 'Replacing', 'a')];
  t.same([...replacedByFailure(loop)], [], 'a loop is no chain');
  t.equal(lastInReplacementChain(v1, replacementMapping([v1, v2, v3]))?.metadata.name, 'ff.v0.3.0');
  t.end();
});

const catalog = buildCatalogFromTexts({
  'catalog.json': [
    { schema: 'olm.package', name: 'ff', defaultChannel: 'stable' },
    {
      schema: 'olm.channel',
      package: 'ff',
      name: 'stable',
      entries: [
        { name: 'ff.v0.1.0' },
        { name: 'ff.v0.2.0', replaces: 'ff.v0.1.0' },
        { name: 'ff.v0.3.0', replaces: 'ff.v0.2.0' },
      ],
    },
    ...['0.1.0', '0.2.0', '0.3.0'].map((v) => ({
      schema: 'olm.bundle',
      package: 'ff',
      name: `ff.v${v}`,
      image: `example.com/ff:${v}`,
      properties: [{ type: 'olm.package', value: { packageName: 'ff', version: v } }],
    })),
  ]
    .map((o) => JSON.stringify(o))
    .join('\n'),
}).index;

function snapshot(
  og: OperatorGroup,
  newPhase = 'Failed',
  installedCSV = 'ff.v0.2.0',
): ResolveSnapshot {
  const sub = {
    metadata: { name: 'ff', namespace: 'ns', resourceVersion: '1' },
    spec: { name: 'ff', channel: 'stable', source: 'cat', sourceNamespace: 'ns' },
    status: {
      installedCSV,
      currentCSV: 'ff.v0.2.0',
      state: 'AtLatestKnown',
      lastUpdated: '2026-01-01T00:00:00Z',
    },
  } as unknown as Subscription;
  return {
    cluster: 'c',
    namespace: 'ns',
    globalNamespace: 'olm',
    subscriptions: [sub],
    // The upgrade to v0.2.0 failed: v0.1.0 is Replacing, v0.2.0 Failed.
    csvs: [csv('ff.v0.1.0', 'Replacing'), csv('ff.v0.2.0', newPhase, 'ff.v0.1.0')],
    operatorGroups: [og],
    catalogs: [
      {
        name: 'cat',
        namespace: 'ns',
        priority: 0,
        uid: 'u',
        resourceVersion: '1',
        healthy: true,
        digest: catalog.digest,
        index: catalog,
      },
    ],
    previous: undefined,
    now: '2026-01-01T00:00:00Z',
  };
}

void t.test('fail forward - resolution upgrades a Failed CSV to the next bundle', (t) => {
  const d = decideResolve(snapshot(group('TechPreviewUnsafeFailForward'))).writes;
  t.same(d.resolution?.problems, []);
  t.match(d.record?.bundles, [{ name: 'ff.v0.3.0', action: 'upgrade', replaces: 'ff.v0.2.0' }]);
  t.end();
});

void t.test('fail forward - with Default, a failed upgrade holds the Subscription', (t) => {
  const d = decideResolve(snapshot(group('Default'))).writes;
  t.equal(
    d.record?.bundles.some((b) => b.name === 'ff.v0.3.0'),
    false,
    'no upgrade past the Failed CSV',
  );
  // As upstream's Default: the Replacing predecessor and the Failed CSV conflict.
  t.match(d.resolution?.problems[0]?.message, /conflicts with clusterserviceversion ff\.v0\.1\.0/);
  t.end();
});

void t.test('upgrade in progress - the CSV being replaced is left out of resolution', (t) => {
  const v1 = csv('ff.v0.1.0', 'Replacing');
  const v2 = csv('ff.v0.2.0', 'Installing', 'ff.v0.1.0');
  const referenced = new Set(['ff.v0.2.0']);
  t.same([...replacedByUpgrade([v1, v2], referenced)], ['ff.v0.1.0']);
  t.same(
    [...replacedByUpgrade([csv('ff.v0.1.0', 'Succeeded'), v2], referenced)],
    ['ff.v0.1.0'],
    'before the CSV lifecycle marks it Replacing',
  );
  t.same(
    [...replacedByUpgrade([v1, csv('ff.v0.2.0', 'Failed', 'ff.v0.1.0')], referenced)],
    [],
    'a failed upgrade keeps its predecessor',
  );
  t.same([...replacedByUpgrade([v1, v2], new Set())], [], 'a chain no Subscription names');
  t.same(
    [...replacedByUpgrade([v1, v2], new Set(['ff.v0.1.0', 'ff.v0.2.0']))],
    [],
    'a CSV a Subscription names stays',
  );
  t.end();
});

for (const strategy of ['Default', 'TechPreviewUnsafeFailForward']) {
  void t.test(`upgrade in progress - no ResolutionFailed while it runs (${strategy})`, (t) => {
    for (const phase of ['Pending', 'InstallReady', 'Installing', 'Succeeded']) {
      const d = decideResolve(snapshot(group(strategy), phase)).writes;
      t.same(d.resolution?.problems, [], phase);
      // Before the Subscription's installedCSV catches up: its currentCSV exists, so it names that.
      const lagging = decideResolve(snapshot(group(strategy), phase, 'ff.v0.1.0')).writes;
      t.same(lagging.resolution?.problems, [], `${phase}, installedCSV still the old CSV`);
      t.equal(
        d.writes.some((w) => w.op === 'event'),
        false,
        `${phase}: no ResolutionFailed Event`,
      );
      t.match(d.record?.bundles, [{ name: 'ff.v0.3.0', action: 'upgrade', replaces: 'ff.v0.2.0' }]);
    }
    t.end();
  });
}
