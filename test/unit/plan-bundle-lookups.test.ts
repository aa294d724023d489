// The plan function's bundle lookups, pure: the OperatorGroup's unpack annotations, a lookup
// pending while the registry is unreachable until the timeout (DeadlineExceeded), a failure at
// once otherwise (or retried when a minimum retry interval is set), and the Subscription's
// BundleUnpacking / BundleUnpackFailed conditions.
import t from 'tap';
import type { InstallPlan, OperatorGroup } from '../../shared/api/index.js';
import type { RecordedBundle } from '../../shared/resolver/record.js';
import {
  goDurationMs,
  judgeLookups,
  unpackConditions,
  unpackTimingOf,
} from '../../functions/plan/bundle-lookups.js';

const bundle: RecordedBundle = {
  package: 'demo',
  name: 'demo.v1',
  version: '1.0.0',
  catalog: { name: 'cat', namespace: 'olm' },
  catalogDigest: 'sha256:x',
  channel: 'stable',
  subscription: 'demo',
  action: 'install',
  replaces: null,
  properties: [{ type: 'olm.package', value: { packageName: 'demo', version: '1.0.0' } }],
  requires: [],
};
const plan: InstallPlan = {
  metadata: { name: 'install-x', namespace: 'ns', creationTimestamp: '2026-11-26T10:00:00Z' },
  spec: { clusterServiceVersionNames: ['demo.v1'], approval: 'Automatic', approved: true },
};
const og = (annotations: Record<string, string>): OperatorGroup =>
  ({ metadata: { name: 'og', namespace: 'ns', annotations }, spec: {} }) as OperatorGroup;
const at = (seconds: number) =>
  new Date(Date.parse('2026-11-26T10:00:00Z') + seconds * 1000).toISOString().replace('.000', '');
const image = 'registry.example/demo-bundle@sha256:1';

t.test('bundle lookups - the OperatorGroup annotations time the unpack', (t) => {
  t.equal(goDurationMs('1m30s'), 90_000);
  t.equal(goDurationMs('500ms'), 500);
  t.equal(goDurationMs('soon'), undefined);
  t.same(unpackTimingOf([]), { timeoutMs: 600_000 });
  t.same(
    unpackTimingOf([
      og({
        'operatorframework.io/bundle-unpack-timeout': '2m',
        'operatorframework.io/bundle-unpack-min-retry-interval': '10s',
      }),
    ]),
    { timeoutMs: 120_000, minRetryMs: 10_000 },
  );
  t.same(
    unpackTimingOf([og({ 'operatorframework.io/bundle-unpack-timeout': 'bad' })]),
    { timeoutMs: 600_000 },
    'a malformed timeout means the default, as upstream',
  );
  t.end();
});

t.test('bundle lookups - unpacked: recorded without conditions', (t) => {
  const verdict = judgeLookups({
    plan,
    bundles: [bundle],
    reads: new Map([['demo.v1', { image }]]),
    timing: { timeoutMs: 600_000 },
    now: at(1),
  });
  t.equal(verdict.kind, 'ready');
  t.same(verdict.lookups, [
    {
      path: image,
      identifier: 'demo.v1',
      replaces: '',
      catalogSourceRef: { kind: 'CatalogSource', namespace: 'olm', name: 'cat' },
      properties: JSON.stringify({ properties: bundle.properties }),
    },
  ]);
  t.end();
});

t.test('bundle lookups - unreachable registry: pending, then DeadlineExceeded', (t) => {
  const reads = new Map([
    ['demo.v1', { image, problem: { message: 'registry down', retryable: true } }],
  ]);
  const pending = judgeLookups({
    plan,
    bundles: [bundle],
    reads,
    timing: { timeoutMs: 60_000 },
    now: at(10),
  });
  t.equal(pending.kind, 'pending');
  t.equal(pending.kind === 'pending' ? pending.retryAfterMs : 0, 5_000);
  t.match(pending.lookups[0]?.conditions?.[0], {
    type: 'BundleLookupPending',
    status: 'True',
    reason: 'JobIncomplete',
    message: 'unpack job not completed: registry down',
  });
  const planned = {
    ...plan,
    status: {
      phase: 'Installing' as const,
      catalogSources: ['cat'],
      bundleLookups: pending.lookups,
    },
  };
  t.same(
    unpackConditions([], planned, at(10)).map((c) => [c.type, c.status, c.reason]),
    [['BundleUnpacking', 'True', 'UnpackingInProgress']],
  );
  const late = judgeLookups({
    plan,
    bundles: [bundle],
    reads,
    timing: { timeoutMs: 60_000 },
    now: at(61),
  });
  t.equal(late.kind, 'failed');
  t.match(late.lookups[0]?.conditions?.[0], {
    type: 'BundleLookupFailed',
    reason: 'DeadlineExceeded',
  });
  t.equal(
    late.kind === 'failed' ? late.message : '',
    'bundle unpacking failed. Reason: DeadlineExceeded, and Message: bundle unpack did not finish within the timeout (60s): registry down',
  );
  t.end();
});

t.test('bundle lookups - a bad image fails at once, or is retried with a retry interval', (t) => {
  const reads = new Map([
    ['demo.v1', { image, problem: { message: 'no manifests', retryable: false } }],
  ]);
  const failed = judgeLookups({
    plan,
    bundles: [bundle],
    reads,
    timing: { timeoutMs: 600_000 },
    now: at(1),
  });
  t.equal(failed.kind, 'failed');
  t.match(failed.lookups[0]?.conditions?.[0], {
    type: 'BundleLookupFailed',
    reason: 'JobFailed',
    message: 'no manifests',
  });
  const planned = {
    ...plan,
    status: { phase: 'Failed' as const, catalogSources: ['cat'], bundleLookups: failed.lookups },
  };
  const conditions = unpackConditions(
    [{ type: 'BundleUnpacking', status: 'True', reason: 'UnpackingInProgress' }],
    planned,
    at(1),
  );
  t.same(
    conditions.map((c) => [c.type, c.status, c.reason, c.message]),
    [
      [
        'BundleUnpackFailed',
        'True',
        'BundleUnpackFailed',
        'bundle unpacking failed. Reason: JobFailed, and Message: no manifests',
      ],
    ],
  );
  const retried = judgeLookups({
    plan,
    bundles: [bundle],
    reads,
    timing: { timeoutMs: 600_000, minRetryMs: 30_000 },
    now: at(1),
  });
  t.equal(retried.kind, 'pending');
  t.equal(retried.kind === 'pending' ? retried.retryAfterMs : 0, 30_000);
  t.end();
});
