import t from 'tap';
import { decideLease, LeaseWatch, type LeaseObject } from '../../shared/kube/leader-election.js';

const where = { namespace: 'olmq', name: 'watcher-c1' };
const at = (iso: string): Date => new Date(iso);
/** A standby that has seen the Lease unchanged for `ms` on its own clock. */
const standby = (ms: number) => ({ unchangedForMs: ms, holding: false });
const leading = { unchangedForMs: 0, holding: true };

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
  const d = decideLease(undefined, where, 'a', at('2026-01-01T00:00:00.000Z'), 15, standby(0));
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
      leading,
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
    standby(14_999),
  );
  t.same(d, { action: 'wait', holder: 'a', expiresInMs: 1 });
  t.end();
});

t.test('leader election - a standby takes over an expired lease and counts the transition', (t) => {
  const d = decideLease(
    held('a', '2026-01-01T00:00:00.000000Z', 2),
    where,
    'b',
    at('2026-01-01T00:00:15.001Z'),
    15,
    standby(15_001),
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
    standby(0),
  );
  t.equal(d.action, 'takeover');
  t.end();
});

t.test(
  'leader election - a renewTime far in the past is not expired while the standby saw it change',
  (t) => {
    // The holder's clock is a day behind ours: comparing its stamps with our clock would steal
    // a live lease.
    const d = decideLease(
      held('a', '2025-12-31T00:00:00.000000Z'),
      where,
      'b',
      at('2026-01-01T00:00:00.000Z'),
      15,
      standby(2_000),
    );
    t.same(d, { action: 'wait', holder: 'a', expiresInMs: 13_000 });
    t.end();
  },
);

t.test(
  'leader election - a renewTime far in the future expires once unchanged for the lease duration',
  (t) => {
    // The holder's clock is a day ahead: its stamps alone would keep a dead lease alive for a day.
    const d = decideLease(
      held('a', '2026-01-02T00:00:00.000000Z', 4),
      where,
      'b',
      at('2026-01-01T00:00:00.000Z'),
      15,
      standby(15_000),
    );
    t.equal(d.action, 'takeover');
    t.match(d, { lease: { spec: { holderIdentity: 'b', leaseTransitions: 5 } } });
    t.end();
  },
);

t.test(
  'leader election - a lease held under our identity by an earlier life is a new term',
  (t) => {
    const d = decideLease(
      held('a', '2026-01-01T00:00:00.000000Z', 2),
      where,
      'a',
      at('2026-01-01T00:00:01.000Z'),
      15,
      standby(0),
    );
    t.equal(d.action, 'takeover');
    t.match(d, { lease: { spec: { leaseTransitions: 3 } } }, 'the epoch moves on');
    t.end();
  },
);

t.test('leader election - the lease watch times changes on its own clock', (t) => {
  let nowMs = 1_000;
  const watch = new LeaseWatch(() => nowMs);
  const lease = held('a', '2026-01-01T00:00:00.000000Z');
  t.equal(watch.see(lease), 0, 'first sight starts the clock');
  nowMs += 10_000;
  t.equal(watch.see(lease), 10_000, 'unchanged since');
  nowMs += 1_000;
  const renewed = held('a', '2020-01-01T00:00:00.000000Z'); // any change counts, even backwards
  t.equal(watch.see(renewed), 0, 'a renewal restarts it');
  nowMs += 500;
  t.equal(
    watch.see({ ...renewed, metadata: { ...renewed.metadata, resourceVersion: '8' } }),
    0,
    'so does a new resourceVersion',
  );
  t.end();
});
