// The Subscription's deprecation conditions from the catalog's olm.deprecations, as the newest
// upstream sets them (not in v0.26.0): PackageDeprecated, ChannelDeprecated, BundleDeprecated
// for the installed CSV, and the Deprecated roll-up.
import t from 'tap';
import { deprecationNotices, withDeprecations } from '../../functions/resolve/deprecations.js';
import { resolvedSubscriptionStatus } from '../../functions/resolve/subscription-status.js';
import type { Subscription } from '../../shared/api/index.js';
import { buildCatalogFromTexts, type CatalogIndex } from '../../shared/catalog/index.js';

const now = '2026-11-22T10:00:00Z';
const later = '2026-11-22T11:00:00Z';

function catalog(deprecations: object[]): CatalogIndex {
  const objects = [
    { schema: 'olm.package', name: 'etcd', defaultChannel: 'stable' },
    { schema: 'olm.channel', package: 'etcd', name: 'stable', entries: [{ name: 'etcd.v1' }] },
    { schema: 'olm.channel', package: 'etcd', name: 'alpha', entries: [{ name: 'etcd.v1' }] },
    {
      schema: 'olm.bundle',
      package: 'etcd',
      name: 'etcd.v1',
      image: 'example.com/etcd:v1',
      properties: [{ type: 'olm.package', value: { packageName: 'etcd', version: '1.0.0' } }],
    },
    ...(deprecations.length === 0
      ? []
      : [{ schema: 'olm.deprecations', package: 'etcd', entries: deprecations }]),
  ];
  return buildCatalogFromTexts({
    'catalog.json': objects.map((o) => JSON.stringify(o)).join('\n'),
  }).index;
}

const everything = catalog([
  { reference: { schema: 'olm.package' }, message: 'etcd is end of life' },
  { reference: { schema: 'olm.channel', name: 'stable' }, message: 'use channel fast' },
  { reference: { schema: 'olm.bundle', name: 'etcd.v1' }, message: 'etcd.v1 has a CVE' },
]);

const sub = (channel: string | undefined, status?: Subscription['status']): Subscription => ({
  metadata: { name: 'etcd', namespace: 'ns' },
  spec: {
    source: 'community',
    sourceNamespace: 'olm',
    name: 'etcd',
    ...(channel === undefined ? {} : { channel }),
  },
  ...(status === undefined ? {} : { status }),
});

void t.test(
  'resolve deprecations - package, channel and bundle notices of the installed CSV',
  (t) => {
    const notices = deprecationNotices(sub('stable'), 'etcd.v1', everything);
    t.same(notices, {
      package: 'etcd is end of life',
      channel: 'use channel fast',
      bundle: 'etcd.v1 has a CVE',
    });
    t.same(withDeprecations([], notices, now), [
      {
        type: 'PackageDeprecated',
        status: 'True',
        message: 'etcd is end of life',
        lastTransitionTime: now,
      },
      {
        type: 'ChannelDeprecated',
        status: 'True',
        message: 'use channel fast',
        lastTransitionTime: now,
      },
      {
        type: 'BundleDeprecated',
        status: 'True',
        message: 'etcd.v1 has a CVE',
        lastTransitionTime: now,
      },
      {
        type: 'Deprecated',
        status: 'True',
        message: 'etcd is end of life; use channel fast; etcd.v1 has a CVE',
        lastTransitionTime: now,
      },
    ]);
    t.equal(
      deprecationNotices(sub('alpha'), 'etcd.v1', everything)?.channel,
      null,
      'another channel of the package is not deprecated',
    );
    t.equal(
      deprecationNotices(sub(undefined), 'etcd.v1', everything)?.channel,
      null,
      'no channel condition when the Subscription names no channel (as upstream)',
    );
    t.equal(
      deprecationNotices(sub('stable'), undefined, everything),
      undefined,
      'nothing before install',
    );
    t.equal(
      deprecationNotices(sub('stable'), 'etcd.v0', everything),
      undefined,
      'an installed CSV the catalog does not list leaves the conditions as they are',
    );
    t.end();
  },
);

void t.test(
  'resolve deprecations - unchanged notices write nothing; lifted ones are removed',
  (t) => {
    const first = resolvedSubscriptionStatus(
      sub('stable', { lastUpdated: now, installedCSV: 'etcd.v1', state: 'AtLatestKnown' }),
      [],
      { kind: 'resolved' },
      false,
      now,
      (installed) => deprecationNotices(sub('stable'), installed, everything),
    );
    t.ok(first?.conditions?.some((c) => c.type === 'Deprecated'));
    t.equal(
      resolvedSubscriptionStatus(
        sub('stable', first),
        [],
        { kind: 'resolved' },
        false,
        later,
        (installed) => deprecationNotices(sub('stable'), installed, everything),
      ),
      undefined,
      'the same notices write nothing',
    );
    const packageOnly = catalog([
      { reference: { schema: 'olm.package' }, message: 'etcd is end of life' },
    ]);
    const lifted = resolvedSubscriptionStatus(
      sub('stable', first),
      [],
      { kind: 'resolved' },
      false,
      later,
      (installed) => deprecationNotices(sub('stable'), installed, packageOnly),
    );
    const types = (lifted?.conditions ?? [])
      .map((c) => c.type)
      .filter((c) => c.endsWith('Deprecated'));
    t.same(types.sort(), ['Deprecated', 'PackageDeprecated']);
    t.equal(
      lifted?.conditions?.find((c) => c.type === 'Deprecated')?.message,
      'etcd is end of life',
    );
    const none = resolvedSubscriptionStatus(
      sub('stable', lifted),
      [],
      { kind: 'resolved' },
      false,
      later,
      (installed) => deprecationNotices(sub('stable'), installed, catalog([])),
    );
    t.notOk(
      none?.conditions?.some((c) => c.type.endsWith('Deprecated')),
      'every deprecation condition goes when the catalog lifts them',
    );
    t.end();
  },
);
