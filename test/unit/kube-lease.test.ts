import t from 'tap';
import { decideLease, type LeaseObject } from '../../shared/kube/leader-election.js';

const where = { namespace: 'olmq', name: 'watcher-c1' };
const at = (iso: string): Date => new Date(iso);

function held(holder: string, renewTime: string, transitions = 0): LeaseObject {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { ...where, resourceVersion: '7' },
    spec: {
      holderIdentity: holder,
      leaseDurationSeconds: 15,
      renewTime,
      acquireTime: renewTime,
      leaseTransitions: transitions,
    },
  };
}

t.test('leader election - no lease yet: create it as holder', (t) => {
  const d = decideLease(undefined, where, 'a', at('2026-01-01T00:00:00.000Z'), 15);
  t.equal(d.action, 'create');
  t.match(d, {
    lease: {
      metadata: where,
      spec: { holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 },
    },
  });
  t.match(d, { lease: { spec: { renewTime: '2026-01-01T00:00:00.000000Z' } } }, 'MicroTime format');
  t.end();
});

t.test(
  'leader election - the holder renews, keeping the resourceVersion for a conditional write',
  (t) => {
    const d = decideLease(
      held('a', '2026-01-01T00:00:00.000000Z'),
      where,
      'a',
      at('2026-01-01T00:00:05.000Z'),
      15,
    );
    t.equal(d.action, 'renew');
    t.match(d, {
      lease: {
        metadata: { resourceVersion: '7' },
        spec: { renewTime: '2026-01-01T00:00:05.000000Z' },
      },
    });
    t.end();
  },
);

t.test('leader election - a standby waits while the lease is fresh', (t) => {
  const d = decideLease(
    held('a', '2026-01-01T00:00:00.000000Z'),
    where,
    'b',
    at('2026-01-01T00:00:14.999Z'),
    15,
  );
  t.same(d, { action: 'wait', holder: 'a', expiresAt: at('2026-01-01T00:00:15.000Z') });
  t.end();
});

t.test('leader election - a standby takes over an expired lease and counts the transition', (t) => {
  const d = decideLease(
    held('a', '2026-01-01T00:00:00.000000Z', 2),
    where,
    'b',
    at('2026-01-01T00:00:15.001Z'),
    15,
  );
  t.equal(d.action, 'takeover');
  t.match(d, {
    lease: {
      metadata: { resourceVersion: '7' },
      spec: { holderIdentity: 'b', leaseTransitions: 3 },
    },
  });
  t.end();
});

t.test('leader election - a released lease (no holder) is taken at once', (t) => {
  const d = decideLease(
    held('', '2026-01-01T00:00:00.000000Z'),
    where,
    'b',
    at('2026-01-01T00:00:01.000Z'),
    15,
  );
  t.equal(d.action, 'takeover');
  t.end();
});
