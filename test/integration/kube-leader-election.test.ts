// A leader that stops hands its Lease back so a standby need not wait for it to expire, but only
// for a bounded time: an API server that does not answer must not hold up the shutdown.
import { getEventListeners } from 'node:events';
import { KubeConfig } from '@kubernetes/client-node';
import t, { type Test } from 'tap';
import { KubeClient } from '../../shared/kube/client.js';
import {
  campaign,
  type LeaderElectionOptions,
  type LeaseObject,
} from '../../shared/kube/leader-election.js';
import { startCluster, type ClusterFixture } from '../harness/devcluster.js';
import { capturingLogger } from '../harness/log.js';
import { relayTo } from '../harness/tcp-relay.js';
import { waitFor } from '../harness/wait.js';

const lease = { namespace: 'default', name: 'olmq-test-leader' };
const leaseRef = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...lease };
/** Room for timers firing late on a loaded machine. */
const slackMs = 2_000;

function electionOptions(
  identity: string,
  extra: Partial<LeaderElectionOptions> = {},
): LeaderElectionOptions {
  return {
    ...lease,
    identity,
    leaseDurationSeconds: 60,
    // No renewal falls into the test: stopping is the only write after winning.
    renewIntervalMs: 60_000,
    retryIntervalMs: 100,
    ...extra,
  };
}

async function clusterFor(t: Test): Promise<ClusterFixture> {
  const fixture = await startCluster();
  t.teardown(() => fixture.close());
  return fixture;
}

async function clientOf(t: Test, kubeConfig: KubeConfig): Promise<KubeClient> {
  const client = await KubeClient.fromKubeConfig('c1', kubeConfig, { userAgent: 'olmq-test' });
  t.teardown(() => client.close());
  return client;
}

interface Candidate {
  /** Stops the campaign; resolves with how long it took to return. */
  stop(timeoutMs: number): Promise<number>;
}

// Campaigns until it leads (its work runs until leadership ends), then hands back control.
async function leaderOn(
  client: KubeClient,
  options: LeaderElectionOptions,
  timeoutMs = 10_000,
): Promise<Candidate> {
  const stopping = new AbortController();
  let leading = false;
  let stopped = false;
  const running = campaign(
    client,
    options,
    (leadership) =>
      new Promise<void>((resolve) => {
        leading = true;
        leadership.addEventListener('abort', () => resolve(), { once: true });
      }),
    capturingLogger('error').log,
    stopping.signal,
  ).finally(() => (stopped = true));
  await waitFor(`${options.identity} to lead`, () => leading, timeoutMs);
  return {
    async stop(timeoutMs) {
      const since = Date.now();
      stopping.abort();
      await waitFor(`the campaign of ${options.identity} to return`, () => stopped, timeoutMs);
      await running;
      return Date.now() - since;
    },
  };
}

t.test('leader election - a leader stopping hands its Lease back (no holder)', async (t) => {
  const fixture = await clusterFor(t);
  const client = await clientOf(t, fixture.kubeConfig);
  const leader = await leaderOn(client, electionOptions('replica-a'));
  t.equal(
    (await client.get<LeaseObject>(leaseRef))?.spec?.holderIdentity,
    'replica-a',
    'the leader holds the Lease',
  );
  await leader.stop(slackMs);
  t.equal(
    (await client.get<LeaseObject>(leaseRef))?.spec?.holderIdentity,
    '',
    'the Lease has no holder',
  );
});

t.test(
  'leader election - a leader stopping while the API server never answers returns after the release cap',
  async (t) => {
    const fixture = await clusterFor(t);
    const direct = await clientOf(t, fixture.kubeConfig);
    // The candidate reaches the API server through a relay that can go silent.
    const relay = await relayTo(t, fixture.cluster.port);
    const relayed = new URL(fixture.cluster.url);
    relayed.port = String(relay.port);
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(
      fixture.cluster.kubeconfig().replace(fixture.cluster.url, relayed.origin),
    );
    const releaseTimeoutMs = 300;
    const leader = await leaderOn(
      await clientOf(t, kubeConfig),
      electionOptions('replica-a', { releaseTimeoutMs }),
    );

    relay.goSilent();
    const tookMs = await leader.stop(releaseTimeoutMs + slackMs);
    t.ok(tookMs >= releaseTimeoutMs - 5, `tried to release for the whole cap (${tookMs} ms)`);
    t.equal(
      (await direct.get<LeaseObject>(leaseRef))?.spec?.holderIdentity,
      'replica-a',
      'the release never reached the server: the Lease is left to expire',
    );
  },
);

t.test(
  'leader election - renewing and retrying leave no abort listener behind on the stop signal',
  async (t) => {
    const fixture = await clusterFor(t);
    const client = await clientOf(t, fixture.kubeConfig);
    const log = capturingLogger('error').log;
    const fast = { renewIntervalMs: 5, retryIntervalMs: 5 };
    const leaderStop = new AbortController();
    const standbyStop = new AbortController();
    let leading = false;
    const leader = campaign(
      client,
      electionOptions('replica-a', fast),
      (leadership) =>
        new Promise<void>((resolve) => {
          leading = true;
          leadership.addEventListener('abort', () => resolve(), { once: true });
        }),
      log,
      leaderStop.signal,
    );
    await waitFor('replica-a to lead', () => leading, 10_000);
    const standby = campaign(
      client,
      electionOptions('replica-b', fast),
      () => Promise.resolve(),
      log,
      standbyStop.signal,
    );
    // Only the leader writes the Lease: 30 new versions are 30 renewals (and as many standby
    // retries, at the same interval).
    const versionOf = async (): Promise<number> =>
      Number((await client.get<LeaseObject>(leaseRef))?.metadata.resourceVersion ?? 0);
    const first = await versionOf();
    await waitFor('30 renewals', async () => (await versionOf()) - first >= 30, 30_000, 20);
    // The leader's signal keeps the one listener that ends its leadership; the standby's, at
    // most the one of the wait in progress.
    t.ok(getEventListeners(leaderStop.signal, 'abort').length <= 1, 'leader: no listener piles up');
    t.ok(getEventListeners(standbyStop.signal, 'abort').length <= 1, 'standby: none either');
    leaderStop.abort();
    standbyStop.abort();
    await Promise.all([leader, standby]);
  },
);

// A Lease held by a holder whose clock is far off ours: its renewTime says nothing to us.
async function ghostLease(client: KubeClient, renewTime: string): Promise<LeaseObject> {
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }).catch(
    () => undefined, // the devcluster may have it already
  );
  return client.create<LeaseObject>({
    ...leaseRef,
    metadata: { namespace: lease.namespace, name: lease.name },
    spec: {
      holderIdentity: 'ghost',
      leaseDurationSeconds: 1,
      acquireTime: renewTime,
      renewTime,
      leaseTransitions: 4,
    },
  } as LeaseObject);
}

// Campaigns as `identity` with a 1 s lease; `led` is set when it leads.
function candidate(t: Test, client: KubeClient, identity: string) {
  const stopping = new AbortController();
  const state = { ledAt: undefined as number | undefined };
  const running = campaign(
    client,
    electionOptions(identity, { leaseDurationSeconds: 1, renewIntervalMs: 300 }),
    (leadership) =>
      new Promise<void>((resolve) => {
        state.ledAt = Date.now();
        leadership.addEventListener('abort', () => resolve(), { once: true });
      }),
    capturingLogger('error').log,
    stopping.signal,
  );
  t.teardown(async () => {
    stopping.abort();
    await running;
  });
  return state;
}

t.test(
  'leader election - a lease renewed with timestamps far in the past is not taken over while it keeps changing, and is once it stops',
  async (t) => {
    const fixture = await clusterFor(t);
    const client = await clientOf(t, fixture.kubeConfig);
    let current = await ghostLease(client, '2000-01-01T00:00:00.000000Z');
    const standby = candidate(t, client, 'replica-b');
    // The ghost renews every 200 ms (a 1 s lease), stamping times from a clock 26 years slow.
    let lastRenewal = Date.now();
    for (let i = 1; i <= 10; i++) {
      await waitFor(`renewal ${i} due`, () => Date.now() - lastRenewal >= 200, 5_000, 5);
      const stamp = `2000-01-01T00:00:${String(i).padStart(2, '0')}.000000Z`;
      current = await client.update({ ...current, spec: { ...current.spec, renewTime: stamp } });
      lastRenewal = Date.now();
      t.equal(standby.ledAt, undefined, `renewal ${i}: the standby still waits`);
    }
    await waitFor('the standby to take over', () => standby.ledAt, 1_000 + slackMs);
    t.ok(
      (standby.ledAt ?? 0) - lastRenewal >= 900,
      `it waited a lease duration after the last change (${(standby.ledAt ?? 0) - lastRenewal} ms)`,
    );
    const taken = await client.get<LeaseObject>(leaseRef);
    t.match(taken?.spec, { holderIdentity: 'replica-b', leaseTransitions: 5 }, 'a new epoch');
  },
);

t.test(
  'leader election - a dead lease with a renewTime far in the future is taken over after one lease duration',
  async (t) => {
    const fixture = await clusterFor(t);
    const client = await clientOf(t, fixture.kubeConfig);
    await ghostLease(client, '2100-01-01T00:00:00.000000Z');
    const since = Date.now();
    const standby = candidate(t, client, 'replica-b');
    await waitFor('the standby to take over', () => standby.ledAt, 1_000 + slackMs);
    t.ok(
      (standby.ledAt ?? 0) - since >= 900,
      `not before a lease duration on its clock (${(standby.ledAt ?? 0) - since} ms)`,
    );
    const taken = await client.get<LeaseObject>(leaseRef);
    t.match(taken?.spec, { holderIdentity: 'replica-b', leaseTransitions: 5 }, 'a new epoch');
  },
);

t.test(
  'leader election - a renewal that lands after the renew deadline ends the term: a new one begins, with a new epoch',
  async (t) => {
    const fixture = await clusterFor(t);
    const client = await clientOf(t, fixture.kubeConfig);
    // A 3 s lease: the renew deadline is 2 s, renewals every 500 ms.
    const options = electionOptions('replica-a', {
      leaseDurationSeconds: 3,
      renewIntervalMs: 500,
      retryIntervalMs: 100,
    });
    const terms: { epoch: number; lapsed: boolean; ended: boolean }[] = [];
    const stopping = new AbortController();
    const running = campaign(
      client,
      options,
      (leadership, term) =>
        new Promise<void>((resolve) => {
          const seen = { epoch: term.epoch, lapsed: false, ended: false };
          terms.push(seen);
          // What a writer of the term sees: current() false stops its writes.
          const probe = setInterval(() => {
            if (!term.current()) seen.lapsed = true;
          }, 10);
          leadership.addEventListener(
            'abort',
            () => {
              clearInterval(probe);
              seen.ended = true;
              resolve();
            },
            { once: true },
          );
        }),
      capturingLogger('error').log,
      stopping.signal,
    );
    t.teardown(async () => {
      stopping.abort();
      await running;
    });
    await waitFor('a first term', () => terms.length === 1, 10_000);
    // The next renewal is answered 1.8 s after it was sent, 0.5 s after the last one: it lands
    // within the deadline of its own sending, but past the deadline of the last renewal.
    const slow = fixture.cluster.faults.inject({
      verbs: ['update'],
      resources: ['leases'],
      action: { kind: 'delay', ms: 1_800 },
      count: 1,
    });
    await waitFor('the slow renewal to be sent', () => slow.hits === 1, 5_000);
    await waitFor('a second term', () => terms.length === 2, 5_000 + slackMs);
    const [first, second] = terms;
    t.ok(first?.lapsed, 'the first term was not current while the renewal was on its way');
    t.ok(first?.ended, 'it ended once the renewal landed');
    t.equal(second?.epoch, (first?.epoch ?? 0) + 1, 'the next term has the next epoch');
  },
);
