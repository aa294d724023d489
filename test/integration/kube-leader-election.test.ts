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
