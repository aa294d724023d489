// The Subscription status the resolve function owns: catalog health, CatalogSourcesUnhealthy,
// ResolutionFailed (set with the explanation, cleared on success), BundleUnpacking, AtLatestKnown,
// no churn.
import t from 'tap';
import {
  resolvedSubscriptionStatus,
  type VisibleCatalog,
} from '../../functions/resolve/subscription-status.js';
import type { Subscription } from '../../shared/api/index.js';

const now = '2026-11-22T10:00:00Z';
const later = '2026-11-22T11:00:00Z';
const healthy: VisibleCatalog = {
  name: 'community',
  namespace: 'olm',
  uid: 'u1',
  resourceVersion: '7',
  healthy: true,
};

const sub = (status?: Subscription['status']): Subscription => ({
  metadata: { name: 'etcd', namespace: 'ns' },
  spec: { source: 'community', sourceNamespace: 'olm', name: 'etcd' },
  ...(status === undefined ? {} : { status }),
});

void t.test('healthy catalogs, resolved: health recorded once, then nothing to write', (t) => {
  const first = resolvedSubscriptionStatus(sub(), [healthy], { kind: 'resolved' }, false, now);
  t.match(first, {
    catalogHealth: [
      {
        catalogSourceRef: { kind: 'CatalogSource', name: 'community', namespace: 'olm', uid: 'u1' },
        healthy: true,
        lastUpdated: now,
      },
    ],
    conditions: [
      {
        type: 'CatalogSourcesUnhealthy',
        status: 'False',
        reason: 'AllCatalogSourcesHealthy',
        message: 'all available catalogsources are healthy',
      },
    ],
    lastUpdated: now,
  });
  t.equal(
    resolvedSubscriptionStatus(sub(first), [healthy], { kind: 'resolved' }, false, later),
    undefined,
    'the same world writes nothing',
  );
  t.end();
});

void t.test('the targeted catalog missing or unhealthy', (t) => {
  const missing = resolvedSubscriptionStatus(sub(), [], { kind: 'resolved' }, false, now);
  t.match(missing?.conditions, [
    {
      type: 'CatalogSourcesUnhealthy',
      status: 'True',
      reason: 'NoCatalogSourcesFound',
      message: 'dependency resolution requires at least one catalogsource',
    },
  ]);
  const other = { ...healthy, name: 'other' };
  t.match(
    resolvedSubscriptionStatus(sub(), [other], { kind: 'resolved' }, false, now)?.conditions,
    [
      {
        status: 'True',
        reason: 'UnhealthyCatalogSourceFound',
        message: 'targeted catalogsource olm/community missing',
      },
    ],
  );
  t.match(
    resolvedSubscriptionStatus(
      sub(),
      [{ ...healthy, healthy: false }],
      { kind: 'resolved' },
      false,
      now,
    )?.conditions,
    [
      {
        status: 'True',
        reason: 'UnhealthyCatalogSourceFound',
        message: 'targeted catalogsource olm/community unhealthy',
      },
    ],
  );
  t.end();
});

void t.test('ResolutionFailed is set with the explanation and cleared on success', (t) => {
  const failed = resolvedSubscriptionStatus(
    sub(),
    [healthy],
    {
      kind: 'failed',
      reason: 'ConstraintsNotSatisfiable',
      message: 'no operators found in package etcd',
    },
    false,
    now,
  );
  t.match(failed?.conditions, [
    { type: 'CatalogSourcesUnhealthy' },
    {
      type: 'ResolutionFailed',
      status: 'True',
      reason: 'ConstraintsNotSatisfiable',
      message: 'constraints not satisfiable: no operators found in package etcd',
    },
  ]);
  const cleared = resolvedSubscriptionStatus(
    sub(failed),
    [healthy],
    { kind: 'resolved' },
    false,
    later,
  );
  t.notOk(
    cleared?.conditions?.some((c) => c.type === 'ResolutionFailed'),
    'cleared at once',
  );
  t.end();
});

void t.test('the CSV a Subscription progresses to exists: AtLatestKnown', (t) => {
  const pending = sub({
    lastUpdated: now,
    state: 'UpgradePending',
    currentCSV: 'etcd.v2',
    installedCSV: 'etcd.v1',
  });
  t.equal(
    resolvedSubscriptionStatus(pending, [healthy], { kind: 'resolved' }, false, later)?.state,
    'UpgradePending',
    'not before the CSV exists',
  );
  t.match(resolvedSubscriptionStatus(pending, [healthy], { kind: 'resolved' }, true, later), {
    state: 'AtLatestKnown',
    installedCSV: 'etcd.v2',
  });
  t.end();
});

void t.test(
  "resolve status - a resolved Subscription carries upstream's bare BundleUnpacking=False",
  (t) => {
    const resolved = resolvedSubscriptionStatus(sub(), [healthy], { kind: 'resolved' }, false, now);
    const unpacking = resolved?.conditions?.filter((c) => c.type === 'BundleUnpacking');
    t.same(
      unpacking,
      [{ type: 'BundleUnpacking', status: 'False' }],
      'no reason, message or time, as upstream sets it',
    );
    const failed = resolvedSubscriptionStatus(
      sub(),
      [healthy],
      { kind: 'failed', reason: 'ConstraintsNotSatisfiable', message: 'no operators found' },
      false,
      now,
    );
    t.notOk(
      failed?.conditions?.some((c) => c.type === 'BundleUnpacking'),
      'not set by a failed resolution',
    );
    const failedLater = resolvedSubscriptionStatus(
      sub(resolved),
      [healthy],
      { kind: 'failed', reason: 'ConstraintsNotSatisfiable', message: 'no operators found' },
      false,
      later,
    );
    t.match(
      failedLater?.conditions?.filter((c) => c.type === 'BundleUnpacking'),
      [{ type: 'BundleUnpacking', status: 'False' }],
      'nor removed by one',
    );
    // The plan function's: True while its plan unpacks bundle images, left to it.
    const unpackingNow = {
      type: 'BundleUnpacking',
      status: 'True',
      reason: 'UnpackingInProgress',
      lastTransitionTime: now,
    };
    const duringUnpack = resolvedSubscriptionStatus(
      sub({ ...resolved, conditions: [unpackingNow] } as Subscription['status']),
      [healthy],
      { kind: 'resolved' },
      false,
      later,
    );
    t.same(
      duringUnpack?.conditions?.filter((c) => c.type === 'BundleUnpacking'),
      [unpackingNow],
      'an unpack in progress is not ended by a resolution',
    );
    t.end();
  },
);

void t.test(
  "resolve status - ResolutionFailed as upstream writes it: no lastTransitionTime, the 'constraints not satisfiable: ' prefix",
  (t) => {
    const failed = resolvedSubscriptionStatus(
      sub(),
      [healthy],
      { kind: 'failed', reason: 'ConstraintsNotSatisfiable', message: 'no operators found' },
      false,
      now,
    );
    const condition = failed?.conditions?.find((c) => c.type === 'ResolutionFailed');
    t.same(condition, {
      type: 'ResolutionFailed',
      status: 'True',
      reason: 'ConstraintsNotSatisfiable',
      message: 'constraints not satisfiable: no operators found',
    });
    t.equal(
      resolvedSubscriptionStatus(
        sub(failed),
        [healthy],
        { kind: 'failed', reason: 'ConstraintsNotSatisfiable', message: 'no operators found' },
        false,
        later,
      ),
      undefined,
      'the same failure writes nothing',
    );
    const prevented = resolvedSubscriptionStatus(
      sub(),
      [healthy],
      { kind: 'failed', reason: 'ErrorPreventedResolution', message: 'catalog unreadable' },
      false,
      now,
    );
    t.same(
      prevented?.conditions?.find((c) => c.type === 'ResolutionFailed'),
      {
        type: 'ResolutionFailed',
        status: 'True',
        reason: 'ErrorPreventedResolution',
        message: 'catalog unreadable',
      },
      'an error that prevented resolution keeps its own message, as upstream',
    );
    t.end();
  },
);

void t.test(
  'resolve status - CatalogSourcesUnhealthy is True when any visible catalog is unhealthy, not only the targeted one',
  (t) => {
    const local: VisibleCatalog = { ...healthy, name: 'local', namespace: 'ns', uid: 'u2' };
    const status = resolvedSubscriptionStatus(
      sub(),
      [healthy, { ...local, healthy: false }],
      { kind: 'resolved' },
      false,
      now,
    );
    t.match(
      status?.conditions?.find((c) => c.type === 'CatalogSourcesUnhealthy'),
      {
        status: 'True',
        reason: 'UnhealthyCatalogSourceFound',
        message: 'catalogsource ns/local unhealthy',
      },
    );
    t.same(
      status?.catalogHealth?.map((h) => [h.catalogSourceRef.name, h.healthy]),
      [
        ['community', true],
        ['local', false],
      ],
      'catalogHealth lists every visible catalog',
    );
    const recovered = resolvedSubscriptionStatus(
      sub(status),
      [healthy, local],
      { kind: 'resolved' },
      false,
      later,
    );
    t.match(
      recovered?.conditions?.find((c) => c.type === 'CatalogSourcesUnhealthy'),
      {
        status: 'False',
        message: 'all available catalogsources are healthy',
      },
    );
    t.end();
  },
);
